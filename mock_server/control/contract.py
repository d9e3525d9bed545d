"""The consumer contract: what a front end's traffic on the mock asked of the API, read from the journal.

Each journal entry the API answered, not a fault's answer, becomes one request shape of its
operation. A shape is the surface, the query parameters present, the body's media type, the body
fields sent and which of them were empty or null, and the security schemes it used. A shape keeps:

- One example: the first with a 2xx answer, else the first. Its credentials are masked as the
  journal masks them, and its identifier values are listed in `references`.
- The statuses the mock answered.
- Per status, the response fields received. `[]` marks a list's items. An answer cut at the
  journal's limit is read up to its last whole value and says `truncated`.

Entries that cannot be read into a shape are counted in `unrecorded`, with why. `journal_full` says
the journal was at its size (`--journal-size`), so older requests may be missing.

The document is stable: the same traffic gives the same bytes, because it is sorted and holds no time
and no journal id. Its shape is `contract_tests/outcome/consumer_contract.schema.json` (`format`,
`version`), and the suite reads it back. Identifiers are the names of the spec's path parameters,
because a value of such a field names an item.
"""

from __future__ import annotations

import email.parser
import email.policy
import json
import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import parse_qsl, unquote

from mock_server.control.journal.base import BODY_LIMIT, Entry, Journal
from mock_server.spec.operations import Operation
from mock_server.spec.quoting import printable, quote
from mock_server.spec.schemas import Schema
from shop_contract.document import dereference, digest

FORMAT = "shop-consumer-contract"
NAME_LIMIT = 200  # The characters of a consumer's name.
VERSION = 1
FIELD_DEPTH = 4  # The levels of a response body whose field names are recorded. "results[].productline" is 2.
_TOKEN = re.compile(r'"[^"\\]*+(?:\\.[^"\\]*+)*+"|[\[\]{},]', re.DOTALL)
_CLOSERS = {"[": "]", "{": "}"}
PREFLIGHT = b"access-control-request-method"
CUT_TRIES = 20  # The last commas of a cut answer tried as its end.
Shape = tuple[str, str, tuple[str, ...], str | None, tuple[str, ...], tuple[str, ...], tuple[str, ...]]


def name_problem(name: str) -> str | None:
    """What is wrong with `name` as a consumer's name, or None; the caller names the field, as for a URL.

    The name is printed in the summary, on a terminal, and a control character there acts on it."""
    if not name.strip() or len(name) > NAME_LIMIT or not name.isprintable():
        return f"must be 1 to {NAME_LIMIT} printable characters, not {quote(name)}"
    return None


def identifiers(spec: Schema) -> frozenset[str]:
    """The names of the spec's path parameters, which are the fields whose values name an item."""
    names: set[str] = set()
    for item in spec["paths"].values():
        item = dereference(item, spec)
        for node in [item, *(value for value in item.values() if isinstance(value, dict))]:
            names |= {param["name"] for param in node.get("parameters", []) if param.get("in") == "path"}
    return frozenset(names)


def schemes_used(spec: Schema, headers: dict[str, str]) -> tuple[str, ...]:
    """The spec's security schemes whose credentials the masked request headers carry, by name."""
    used = []
    for name, scheme in spec.get("components", {}).get("securitySchemes", {}).items():
        if scheme.get("type") == "apiKey" and scheme.get("in") == "header":
            if str(scheme["name"]).lower() in headers:
                used.append(name)
        elif scheme.get("type") == "http":
            given = headers.get("authorization", "").partition(" ")[0]
            if given.lower() == str(scheme.get("scheme", "")).lower():
                used.append(name)
    return tuple(sorted(used))


def read_body(text: str, content_type: str) -> dict[str, Any] | None:
    """The request body's top-level fields, or None when it is not an object of fields this reads.

    It reads JSON, a form and multipart. A form's values are text, and a repeated one counts its last."""
    media_type = content_type.partition(";")[0].strip().lower()
    if media_type == "application/json" or media_type.endswith("+json"):
        try:
            document = json.loads(text)
        except (ValueError, RecursionError):
            return None
        return document if isinstance(document, dict) else None
    if media_type == "application/x-www-form-urlencoded":
        return dict(parse_qsl(text, keep_blank_values=True))
    if media_type == "multipart/form-data":
        return _multipart(text, content_type)
    return None


def _multipart(text: str, content_type: str) -> dict[str, Any] | None:
    """A multipart body's fields, read from the journal's text with its credentials already masked."""
    header = content_type.replace("\r", " ").replace("\n", " ")
    message = email.parser.Parser(policy=email.policy.HTTP).parsestr(f"Content-Type: {header}\r\n\r\n{text}")
    if not message.is_multipart():
        return None
    fields: dict[str, Any] = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        if isinstance(name, str):
            value = part.get_payload(decode=False)
            fields[name] = str(value).removesuffix("\r\n")
    return fields


def read_response(text: str, truncated: bool) -> Any:
    """The JSON answer. One cut at the journal's limit is read up to its last whole member."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        pass
    if not truncated:
        return None
    stack: list[str] = []
    cuts: list[tuple[int, str]] = []  # Before each comma, the text up to it, closed, may be whole JSON.
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token in _CLOSERS:
            stack.append(_CLOSERS[token])
        elif token in ("]", "}") and stack:
            stack.pop()
        elif token == "," and stack:
            cuts.append((match.start(), "".join(reversed(stack))))
    for end, closers in reversed(cuts[-CUT_TRIES:]):  # The last cut may fall in a string the limit left open.
        try:
            return json.loads(text[:end] + closers)
        except (ValueError, RecursionError):
            continue
    return None


def field_paths(value: Any, prefix: str = "", depth: int = FIELD_DEPTH) -> set[str]:
    """The field names in a JSON value, nested ones dotted, a list's items as `name[]`."""
    found: set[str] = set()
    if depth == 0:
        return found
    if isinstance(value, dict):
        for key, item in value.items():
            path = f"{prefix}.{key}" if prefix else str(key)
            found.add(path)
            found |= field_paths(item, path, depth - 1)
    elif isinstance(value, list):
        for item in value:
            found |= field_paths(item, f"{prefix}[]", depth)
    return found


class Recorder:
    """Turns journal entries into the contract document of one consumer."""

    def __init__(self, journal: Journal, spec: Schema) -> None:
        self.journal = journal
        self.spec = spec
        self.identifiers = identifiers(spec)

    def document(self, name: str, entries: Iterable[Entry], journal_full: bool = False) -> dict[str, Any]:
        """The contract of `entries`.

        `journal_full` says the journal was at its size, so older requests may be missing. The document
        says so too, in `journal_full`."""
        shapes: dict[Shape, dict[str, Any]] = {}
        unrecorded: dict[tuple[str, str], int] = {}
        for entry in entries:
            operation = self.journal.index.find(entry.method, entry.path)
            reason = _unrecordable(entry, operation)
            if reason is not None or operation is None:
                key = (operation.operation_id if operation else "-", reason or "not an operation of the spec")
                unrecorded[key] = unrecorded.get(key, 0) + 1
                continue
            shown = self.journal.as_json(entry)
            self._add(shapes, operation, entry, shown)
        interactions = [self._finished(shape, found) for shape, found in sorted(shapes.items(), key=_order)]
        counted: dict[str, int] = {}
        for interaction in interactions:
            counted[interaction["operation"]] = counted.get(interaction["operation"], 0) + 1
            interaction["name"] = f"{interaction['operation']}#{counted[interaction['operation']]}"
        info = self.spec.get("info", {})
        return {
            "format": FORMAT,
            "version": VERSION,
            "consumer": name,
            "journal_full": journal_full,
            "spec": {
                "title": str(info.get("title", "")),
                "version": str(info.get("version", "")),
                "digest": digest(self.spec),
            },
            "interactions": [dict(sorted(interaction.items())) for interaction in interactions],
            "unrecorded": [
                {"operation": operation, "reason": reason, "requests": count}
                for (operation, reason), count in sorted(unrecorded.items())
            ],
        }

    def _add(
        self, shapes: dict[Shape, dict[str, Any]], operation: Operation, entry: Entry, shown: dict[str, Any]
    ) -> None:
        headers = shown["request"]["headers"]
        media_type = headers.get("content-type", "").partition(";")[0].strip().lower() or None
        text = shown["request"]["body"]
        if not text and media_type is None:
            body = None
        else:
            body = read_body(text, headers.get("content-type", ""))
            media_type = media_type or "(none)"
        query = dict(parse_qsl(shown["query"], keep_blank_values=True))
        fields = tuple(sorted(body)) if body is not None else ()
        empty = tuple(sorted(key for key, value in (body or {}).items() if value is None or value == ""))
        shape: Shape = (
            operation.surface,
            operation.operation_id,
            tuple(sorted(query)),
            media_type,
            fields,
            empty,
            schemes_used(self.spec, headers),
        )
        found = shapes.setdefault(shape, {"operation": operation, "requests": 0, "responses": {}, "example": None})
        found["requests"] += 1
        status = str(entry.status)
        response = found["responses"].setdefault(status, {"fields": set(), "truncated": False})
        truncated = bool(shown["response"]["truncated"])
        response["fields"] |= field_paths(read_response(shown["response"]["body"], truncated))
        response["truncated"] = response["truncated"] or truncated
        example = found["example"]
        if example is None or (example["status"] // 100 != 2 and (entry.status or 0) // 100 == 2):
            found["example"] = self._example(operation, entry, query, body, text if body is None and text else None)

    def _example(
        self, operation: Operation, entry: Entry, query: dict[str, str], body: dict[str, Any] | None, raw: str | None
    ) -> dict[str, Any]:
        names = re.findall(r"\{(\w+)\}", operation.template)
        pattern = re.escape(operation.template).replace(r"\{", "{").replace(r"\}", "}")
        for name in names:
            pattern = pattern.replace(f"{{{name}}}", f"(?P<{name}>[^/]+)")
        match = re.search(pattern + "$", entry.path)
        path = {name: unquote(match.group(name)) for name in names} if match else {}
        references = {f"/path/{name}": name for name in path if name in self.identifiers}
        references |= {f"/body/{name}": name for name in body or {} if name in self.identifiers}
        references |= {f"/query/{name}": name for name in query if name in self.identifiers}
        return {
            "path": path,
            "query": query,
            "body": body if raw is None else raw,
            "references": dict(sorted(references.items())),
            "status": entry.status,
        }

    def _finished(self, shape: Shape, found: dict[str, Any]) -> dict[str, Any]:
        surface, operation_id, query, media_type, fields, empty, auth = shape
        operation: Operation = found["operation"]
        return {
            "surface": surface,
            "operation": operation_id,
            "method": operation.method,
            "path": operation.template,
            "request": {
                "path_parameters": sorted(re.findall(r"\{(\w+)\}", operation.template)),
                "query_parameters": list(query),
                "media_type": media_type,
                "body_fields": list(fields),
                "empty_fields": list(empty),
                "auth": list(auth),
            },
            "example": found["example"],
            "statuses": sorted(int(status) for status in found["responses"]),
            "responses": {
                status: {"fields": sorted(answer["fields"]), "truncated": answer["truncated"]}
                for status, answer in sorted(found["responses"].items())
            },
            "requests": found["requests"],
        }


def _unrecordable(entry: Entry, operation: Operation | None) -> str | None:
    if entry.method == "OPTIONS" and any(name.lower() == PREFLIGHT for name, _ in entry.request_headers):
        return "a CORS preflight (the browser's question, not the consumer's request)"
    if operation is None:
        return "not an operation of the spec"
    if entry.fault is not None:
        return "answered by an injected fault, not the mock"
    if entry.status is None:
        return "no answer (the connection was dropped)"
    if len(entry.request_body) > BODY_LIMIT:  # Its shape and example would be a cut body's.
        return f"a request body longer than the journal keeps ({BODY_LIMIT} bytes)"
    return None


def _order(item: tuple[Shape, dict[str, Any]]) -> str:
    return json.dumps(item[0])


def summary(document: dict[str, Any]) -> str:
    """The contract for people: one line per interaction."""
    spec = document["spec"]
    lines = [
        f"Consumer {document['consumer']}: {len(document['interactions'])} interaction(s)"
        f" with {spec['title']} {spec['version']}"
    ]
    for interaction in document["interactions"]:
        request = interaction["request"]
        sent = request["media_type"] or "no body"
        if request["body_fields"]:
            empty = set(request["empty_fields"])
            sent += " {" + ", ".join(f"{name}=''" if name in empty else name for name in request["body_fields"]) + "}"
        query = f"?{'&'.join(request['query_parameters'])}" if request["query_parameters"] else ""
        auth = " + ".join(request["auth"]) or "no credentials"
        statuses = ", ".join(str(status) for status in interaction["statuses"])
        lines.append(
            f"  {interaction['name']:<28} {interaction['method']} {interaction['surface']} {interaction['path']}{query}"
            f"  {sent}  as {auth} -> {statuses} ({interaction['requests']} request(s))"
        )
    if document["journal_full"]:
        lines.append(
            "  the journal was full: older requests may be missing (start the mock with a larger --journal-size)"
        )
    for skipped in document["unrecorded"]:
        lines.append(f"  not recorded: {skipped['operation']}: {skipped['reason']} ({skipped['requests']} request(s))")
    # Recorded traffic names fields and parameters as any client sent them, read here on a terminal.
    return "\n".join(printable(line) for line in lines)
