"""Re-enacting a recorded violation with httpx alone: what `shop-contract replay` and exported tests share.

This module imports only the standard library and httpx. `--export-tests` copies its source, as it
is, into the pytest file it writes, so that file needs no install of the suite. A request is plain
data (`{"method", "url", "headers": [[name, value]], "body"}`), as a report records it.

Re-enacting sends a violation's setup requests and its failing request to today's target. On the way
it changes three things:

- Each recorded surface's base URL is swapped for the current one. A request to any other origin is
  refused before anything is sent.
- Masked credentials are swapped for the current ones.
- An item that a setup request creates gets a fresh identifier when one with its recorded identifier
  exists already. The new identifier is substituted in every later request.

`broken` states, for the exported tests, what each check's rule asks of the answer.

Long because it is copied whole. An exported test file carries this one module and nothing else of the
suite. So what it needs must stay in it, rather than in modules it would have to copy and stitch.
"""

from __future__ import annotations

import json
import random
import re
import string
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import date
from decimal import Decimal, InvalidOperation
from typing import Any
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit

import httpx

MASKED = "[Filtered]"
"""How a report shows a credential the suite sent."""
FORMS = ("application/x-www-form-urlencoded", "multipart/form-data")
WRITES = {"POST": 201, "PUT": 200, "PATCH": 200}
"""The status a successful create, replace or change answers."""
_PLAIN_DECIMAL = re.compile(r"^-?\d*\.?\d*$")
_FRESH_ALPHABET = string.ascii_lowercase + string.digits

Request = dict[str, Any]
Send = Callable[[str, str, list[tuple[str, str]], bytes | None], httpx.Response]
Sendable = tuple[str, str, list[tuple[str, str]], bytes | None]
Together = Callable[[Sequence[Sendable]], list[httpx.Response]]
"""Requests sent at the same instant, their answers in the same order (`at_once`)."""
AT_ONCE = "The requests, at the same instant: "
"""How a race's violation lists the requests it sent at once, each "METHOD path sent ..., answered ..." and
separated by "; " (judge/domain/racing.py): the last of its setup requests."""
DUPLICATE_REFUSED = (400, 409)
"""A duplicate create's refusal, as the spec's decision `duplicate-identifier` admits it."""


def media_type(headers: Sequence[Sequence[str]]) -> str:
    """The request's media type without its parameters, or "" when it names none."""
    value = next((value for name, value in headers if name.lower() == "content-type"), "")
    return value.split(";")[0].strip().lower()


def _boundary(headers: Sequence[Sequence[str]]) -> str:
    value = next((value for name, value in headers if name.lower() == "content-type"), "")
    found = re.search(r'boundary="?([^";]+)"?', value)
    return found.group(1) if found else ""


def _parts(body: str, boundary: str) -> list[tuple[str, str]]:
    """The (head, value) of each part of a multipart body."""
    parts = []
    for chunk in body.split(f"--{boundary}")[1:]:
        if chunk.startswith("--"):
            break
        head, _, value = chunk.removeprefix("\r\n").partition("\r\n\r\n")
        parts.append((head, value.removesuffix("\r\n")))
    return parts


def _part_name(head: str) -> str:
    found = re.search(r'name="([^"]*)"', head)
    return found.group(1) if found else ""


def fields(request: Request) -> dict[str, Any] | None:
    """The body's fields: a JSON object's members, or a form's values as text. It is None for any other body."""
    body, kind = request.get("body"), media_type(request["headers"])
    if body is None:
        return None
    if kind == "application/x-www-form-urlencoded":
        return dict(parse_qsl(body, keep_blank_values=True))
    if kind == "multipart/form-data":
        return {_part_name(head): value for head, value in _parts(body, _boundary(request["headers"]))}
    try:
        decoded = json.loads(body)
    except ValueError:
        return None
    return decoded if isinstance(decoded, dict) else None


def _with_field(request: Request, name: str, old: Any, new: Any) -> Request:
    """`request` with its body's field `name` set to `new` where it holds `old`, in the same encoding."""
    body, kind = request.get("body"), media_type(request["headers"])
    found = fields(request)
    if body is None or found is None or name not in found or str(found[name]) != str(old):
        return request
    if kind == "application/x-www-form-urlencoded":
        pairs = [(key, str(new) if key == name else value) for key, value in parse_qsl(body, keep_blank_values=True)]
        return {**request, "body": urlencode(pairs)}
    if kind == "multipart/form-data":
        boundary = _boundary(request["headers"])
        parts = [(head, str(new) if _part_name(head) == name else value) for head, value in _parts(body, boundary)]
        rebuilt = "".join(f"--{boundary}\r\n{head}\r\n\r\n{value}\r\n" for head, value in parts)
        return {**request, "body": f"{rebuilt}--{boundary}--\r\n"}
    return {**request, "body": json.dumps({**found, name: new})}


def substituted(request: Request, name: str, old: Any, new: Any) -> Request:
    """`request` naming the item `new` wherever it named `old`, in a path segment or the body's field `name`."""
    url = urlsplit(request["url"])
    before, after = quote(str(old), safe=""), quote(str(new), safe="")
    path = "/".join(after if segment == before else segment for segment in url.path.split("/"))
    return _with_field({**request, "url": url._replace(path=path).geturl()}, name, old, new)


def fresh_identifier(prop: Mapping[str, Any], old: Any) -> Any:
    """An identifier unlikely to exist.

    An integer is a random number within the field's bounds. A text is the old text with a random suffix,
    cut to the field's maxLength. The suffix goes before the trailing punctuation and white space,
    because that is what an identifier test is about."""
    rng = random.SystemRandom()
    if prop.get("type") == "integer":
        low = max(int(prop.get("minimum", 1_000_000_000)), 1_000_000_000)
        return rng.randint(low, int(prop.get("maximum", 2**31 - 1)))
    suffix = "~" + "".join(rng.choice(_FRESH_ALPHABET) for _ in range(7))
    limit = int(prop.get("maxLength", 50))
    text = str(old)
    cut = len(text)
    while cut and not (text[cut - 1].isalnum() or text[cut - 1] == "~"):
        cut -= 1
    tail = text[cut:][: max(0, limit - len(suffix))]
    head = text[:cut][: max(0, limit - len(suffix) - len(tail))]
    return (head + suffix)[: limit - len(tail)] + tail


def rebased(url: str, bases: Mapping[str, str]) -> str:
    """`url` under the base URL it is re-enacted on when it is under a recorded one, else as it is.

    `bases` maps each recorded surface's base URL to today's. The longest one that holds `url` counts."""
    for old in sorted(bases, key=len, reverse=True):
        recorded = old.rstrip("/")
        if url == recorded or url.startswith(recorded + "/"):
            return bases[old].rstrip("/") + url[len(recorded) :]
    return url


def origin(url: str) -> tuple[str, str, int | None]:
    """The scheme, host and port `url` names. The port is its scheme's default when none is written."""
    parts = urlsplit(url)
    try:
        port = parts.port or {"http": 80, "https": 443}.get(parts.scheme.lower())
    except ValueError:  # The port written is not a port.
        port = None
    return parts.scheme.lower(), (parts.hostname or "").lower(), port


def elsewhere(steps: Sequence[Request], targets: Iterable[str]) -> str | None:
    """The origin of the first of `steps` going to none of the `targets`' origins, or None.

    The origin is `scheme://host:port`, as written. A report may be anyone's, such as a fork's CI
    artifact. Such a request would carry the user's credentials to a host the user never named, so it is
    refused before anything is sent."""
    allowed = {origin(target) for target in targets}
    for step in steps:
        if origin(step["url"]) not in allowed:
            scheme, host, port = origin(step["url"])
            return f"{scheme}://{host}:{port}"
    return None


def with_credentials(headers: Sequence[Sequence[str]], api_key: str | None, token: str | None) -> list[tuple[str, str]]:
    """The headers with each masked credential replaced by the current one, or dropped when there is none."""
    current = {"x-api-key": api_key, "authorization": f"Bearer {token}" if token else None}
    sent = []
    for name, value in headers:
        if MASKED in value and name.lower() in current:
            replacement = current[name.lower()]
            if replacement is not None:
                sent.append((name, replacement))
        else:
            sent.append((name, value))
    return sent


def _created(request: Request, collections: Sequence[Mapping[str, Any]], base: str) -> Mapping[str, Any] | None:
    """The collection whose create operation `request` is, if it is one."""
    path = request["url"][len(base.rstrip("/")) :].split("?")[0]
    return next((c for c in collections if request["method"] == "POST" and c["create"] == path), None)


# Seven parameters because: an exported test copies this module whole and calls this with plain values, so
# a value grouping them would have to be defined in every exported file too.
def reenact(
    steps: Sequence[Request],
    collections: Sequence[Mapping[str, Any]],
    base: str,
    credentials: tuple[str | None, str | None],
    send: Send,
    at_once: int = 0,
    together: Together | None = None,
) -> list[tuple[Request, httpx.Response]]:
    """Send `steps` in order, and return each request as sent with its answer.

    `steps` are on today's target already (`rebased`, none `elsewhere`). `base` is the base URL of the
    violation's surface there. `collections` holds one entry per collection:
    `{"create": path, "item": path template, "identifier": field, "schema": the field's schema}`.

    A create whose identifier names an item that exists (its item path answers 200) gets a fresh one.
    Every later request then names the new item instead. A later create of an identifier this
    re-enactment chose is sent as recorded, because it is a duplicate when the violation is about one.
    `at_once` counts the requests before the last that a race sent at the same instant; `together`
    sends them so.
    """
    pending = list(steps)
    exchanges: list[tuple[Request, httpx.Response]] = []
    ours: set[str] = set()  # Identifiers this re-enactment chose. A second create of one is the recorded duplicate.
    group = range(len(pending) - 1 - at_once, len(pending) - 1) if at_once else range(0)
    for index, request in enumerate(pending):
        collection = _created(request, collections, base)
        body = fields(request) if collection is not None else None
        name = collection["identifier"] if collection is not None else ""
        if collection is not None and body is not None and name in body and str(body[name]) not in ours:
            old = body[name]
            ours.add(str(old))
            item = base.rstrip("/") + collection["item"].replace("{" + name + "}", quote(str(old), safe=""))
            headers = with_credentials(request["headers"], *credentials)
            if send("GET", item, [h for h in headers if h[0].lower() != "content-type"], None).status_code == 200:
                new = fresh_identifier(collection["schema"], old)
                ours.add(str(new))
                pending[index:] = [substituted(later, name, old, new) for later in pending[index:]]
                request = pending[index]
        if index in group and together is not None:
            if index == group[-1]:
                racing = pending[group.start : index + 1]
                exchanges += zip(racing, together([_sendable(each, credentials) for each in racing]), strict=True)
            continue
        body_bytes = request["body"].encode("utf-8") if request.get("body") is not None else None
        response = send(
            request["method"], request["url"], with_credentials(request["headers"], *credentials), body_bytes
        )
        exchanges.append((request, response))
    return exchanges


def _sendable(request: Request, credentials: tuple[str | None, str | None]) -> Sendable:
    body = request["body"].encode("utf-8") if request.get("body") is not None else None
    return request["method"], request["url"], with_credentials(request["headers"], *credentials), body


def same_value(sent: Any, stored: Any, *, form: bool = False) -> bool:
    """Whether `sent` and `stored` are equal as the contract compares them.

    Decimals compare by value. Form values compare as text, with the empty value as null. A text may
    have the white space at its ends trimmed (decision `trimmed-text`)."""
    if form:
        sent = "" if sent is None else str(sent)
        stored = "" if stored is None else str(stored)
    if sent == stored:
        return True
    if isinstance(sent, str) and isinstance(stored, str) and sent.strip() == stored:
        return True  # By the spec's decision `trimmed-text`, the white space at a text's ends may be trimmed.
    if isinstance(sent, str | int) and isinstance(stored, str) and _PLAIN_DECIMAL.match(str(sent)):
        try:
            return Decimal(str(sent)) == Decimal(stored)
        except InvalidOperation:
            return False
    return False


def _json(response: httpx.Response) -> Any:
    try:
        return response.json()
    except (ValueError, RecursionError):
        return None


def _differences(expected: Mapping[str, Any], actual: Any, form: bool) -> list[str]:
    if not isinstance(actual, dict):
        return [f"expected a JSON object, got {actual!r}"[:200]]
    return [
        f"`{name}`: expected {value!r}, got {actual.get(name, '<missing>')!r}"
        for name, value in expected.items()
        if name not in actual or not same_value(value, actual[name], form=form)
    ]


def _documented(status: int, documented: Sequence[str]) -> bool:
    return str(status) in documented or f"{str(status)[0]}XX" in documented or "default" in documented


def _has_format(value: str, name: Any) -> bool:
    """Whether `value` is of the format `name`, for the formats a validator checks (uri, date). Others pass."""
    if name == "uri":
        return bool(re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", value))
    if name == "date":
        try:
            return len(value) == 10 and date.fromisoformat(value) is not None
        except ValueError:
            return False
    return True


def conforms(value: Any, schema: Mapping[str, Any], where: str = "") -> str | None:
    """Where `value` breaks `schema`, or None. The schema is the subset of JSON Schema an OpenAPI 3.0 response uses."""
    at = where or "the body"
    if value is None:
        return None if schema.get("nullable") or not schema.get("type") else f"{at} is null"
    for sub in schema.get("allOf", []):
        broken = conforms(value, sub, where)
        if broken:
            return broken
    for keyword in ("anyOf", "oneOf"):
        if keyword in schema and all(conforms(value, sub, where) for sub in schema[keyword]):
            return f"{at} matches none of its {keyword}"
    kinds: dict[str, type | tuple[type, ...]] = {
        "object": dict,
        "array": list,
        "string": str,
        "boolean": bool,
        "integer": int,
        "number": (int, float),
    }
    kind = schema.get("type")
    if kind in kinds and (
        not isinstance(value, kinds[kind]) or (kind in ("integer", "number") and isinstance(value, bool))
    ):
        return f"{at} is not of type {kind}: {value!r}"[:300]
    if "enum" in schema and value not in schema["enum"]:
        return f"{at} is not one of {schema['enum']!r}: {value!r}"[:300]
    if isinstance(value, str):
        if len(value) > schema.get("maxLength", len(value)) or len(value) < schema.get("minLength", 0):
            return f"{at} has {len(value)} characters, out of its bounds"
        if "pattern" in schema and not re.search(schema["pattern"], value):
            return f"{at} does not match {schema['pattern']}: {value!r}"[:300]
        if not _has_format(value, schema.get("format")):
            return f"{at} is not a {schema['format']}: {value!r}"[:300]
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if number and not schema.get("minimum", value) <= value <= schema.get("maximum", value):
        return f"{at} is out of its bounds: {value!r}"
    if isinstance(value, list):
        for index, item in enumerate(value):
            broken = conforms(item, schema.get("items", {}), f"{at}[{index}]")
            if broken:
                return broken
    if isinstance(value, dict):
        missing = [name for name in schema.get("required", []) if name not in value]
        if missing:
            return f"{at} lacks the required {', '.join(missing)}"
        properties, extra = schema.get("properties", {}), schema.get("additionalProperties", True)
        for name, item in value.items():
            if name in properties:
                broken = conforms(item, properties[name], f"{at}.{name}")
            elif extra is False:
                broken = f"{at} has {name!r}, which its schema does not allow"
            else:
                broken = conforms(item, extra, f"{at}.{name}") if isinstance(extra, dict) else None
            if broken:
                return broken
    return None


def _creates(path: str, sent: Mapping[str, Any], item: str) -> bool:
    """Whether a POST to `path` sending `sent` creates the item at `item`."""
    segment = item.rstrip("/").rsplit("/", 1)[-1]
    return item.startswith(path) and any(quote(str(value), safe="") == segment for value in sent.values())


def _state(exchanges: Sequence[tuple[Request, httpx.Response]], item: str) -> tuple[dict[str, Any], bool]:
    """What the writes to the item at `item` (its path) should have stored, and whether any went as a form."""
    state: dict[str, Any] = {}
    form = False
    for request, _ in exchanges:
        sent, path = fields(request), urlsplit(request["url"]).path
        if sent is None or request["method"] not in WRITES:
            continue
        form = form or media_type(request["headers"]) in FORMS
        if request["method"] == "PATCH" and path == item:
            state.update(sent)
        elif (request["method"] == "PUT" and path == item) or (
            request["method"] == "POST" and _creates(path, sent, item)
        ):
            state = dict(sent)
    return state, form


def broken(check: str, expect: Mapping[str, Any], exchanges: Sequence[tuple[Request, httpx.Response]]) -> str | None:
    """What the last answer breaks of `check`'s rule, or None when it holds.

    `expect` holds what the contract documents for the operation (statuses, media types, schemas) and, for
    a check with no rule of its own here, the answer recorded when the violation was found.
    """
    if expect.get("racers"):
        return race_broken(check, exchanges[-1 - expect["racers"] : -1], exchanges[-1])
    request, response = exchanges[-1]
    status, body = response.status_code, _json(response)
    kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
    if check == "not_a_server_error":
        return None if status < 500 else f"a server error: HTTP {status}"
    if check == "status_code_conformance":
        return None if _documented(status, expect["statuses"]) else f"undocumented status {status}"
    if check == "content_type_conformance":
        media = expect["media_types"].get(str(status), expect["media_types"].get("default"))
        return None if media is None or kind in media else f"content type {kind!r} not documented for {status}"
    if check == "response_schema_conformance":
        schemas = expect["schemas"].get(str(status), expect["schemas"].get("default", {}))
        schema = schemas.get(kind)
        return None if schema is None else conforms(body, schema)
    if check == "write_echo":
        sent = fields(request)
        if WRITES.get(request["method"]) != status or sent is None:
            return None
        form = media_type(request["headers"]) in FORMS
        diffs = _differences(
            {name: value for name, value in sent.items() if isinstance(body, dict) and name in body}, body, form
        )
        return "the write answered other values: " + "; ".join(diffs) if diffs else None
    if check in ("round_trip", "patch_locality"):
        state, form = _state(exchanges, urlsplit(request["url"]).path)
        wanted = WRITES.get(request["method"], 200)
        if status != wanted:
            return f"expected HTTP {wanted}, got {status}"
        diffs = _differences(state, body, form)
        return "what was written is not what is read: " + "; ".join(diffs) if diffs else None
    if check == "item_identity":
        name, segment = expect.get("identifier"), urlsplit(request["url"]).path.rstrip("/").rsplit("/", 1)[-1]
        if not (200 <= status < 300 and isinstance(body, dict) and name in body):
            return None
        same = str(body[name]).casefold() == unquote(segment).casefold()  # Case aside, by `identifiers-exact`.
        return None if same else f"the item at {segment!r} answers {body[name]!r}"
    if check == "list_scoping" and status == 200 and isinstance(body, dict):
        owner = urlsplit(request["url"]).path.rstrip("/").rsplit("/", 2)[-2]
        name = expect.get("owner")
        other = [item for item in body.get("results", []) if isinstance(item, dict) and name in item]
        wrong = [item[name] for item in other if quote(str(item[name]), safe="") != owner]
        return f"items of another {name} are listed under {owner!r}: {wrong[:3]!r}" if wrong else None
    if "expected_statuses" in expect:
        wanted = expect["expected_statuses"]
        return None if status in wanted else f"expected HTTP {' or '.join(map(str, wanted))}, got {status}"
    if "not_status" in expect and status == expect["not_status"]:
        return f"HTTP {status} again, as when the violation was found: {expect.get('rule', '')}"[:500]
    return None


def racers(rule: str) -> int:
    """How many requests a race's violation sent at the same instant (0: not a race's)."""
    _, found, listed = rule.partition(AT_ONCE)
    return len(listed.split("; ")) if found else 0


def race_broken(
    check: str, racing: Sequence[tuple[Request, httpx.Response]], read: tuple[Request, httpx.Response]
) -> str | None:
    """What a race's answers (`racing`, sent at once) and the read after them break of `check`'s rule."""
    statuses = [response.status_code for _, response in racing]
    if any(status >= 500 for status in statuses):
        return f"sent at the same instant, they answered {statuses} (never a 5xx)"
    done = [200 <= status < 300 for status in statuses]
    body = _json(read[1])
    if check == "concurrent_lost_update" and all(done):
        state = {name: value for request, _ in racing for name, value in (fields(request) or {}).items()}
        diffs = _differences(state, body, False)
        return "a change was lost: " + "; ".join(diffs) if diffs else None
    if check == "concurrent_same_field" and all(done) and isinstance(body, dict):
        sent = [fields(request) or {} for request, _ in racing]
        name = next(iter(sent[0]), "")
        stored = body.get(name)
        return None if any(same_value(each.get(name), stored) for each in sent) else f"`{name}` reads {stored!r}"
    if check == "concurrent_duplicate_create":
        refused = all(status == 201 or status in DUPLICATE_REFUSED for status in statuses)
        return None if statuses.count(201) == 1 and refused else f"creates of one identifier answered {statuses}"
    if check == "concurrent_write_delete" and done[-1] and read[1].status_code != 404:
        return f"the DELETE answered {statuses[-1]}, yet the item answers {read[1].status_code}"
    if check == "concurrent_reference_delete" and all(done):
        return f"the create and the DELETE of what it names both succeeded ({statuses})"
    if check == "concurrent_sub_list_count" and isinstance(body, dict):
        results = body.get("results")
        listed = results if isinstance(results, list) else []
        if statuses.count(201) != len(statuses) or not body.get("count") == len(listed) == len(statuses):
            return f"after creates answered {statuses}, the sub-list counts {body.get('count')!r}, lists {len(listed)}"
    return None


def at_once(requests: Sequence[Sendable], timeout: float) -> tuple[list[httpx.Response], bool]:
    """`requests` sent at the same instant, each on its own thread and connection, released by a barrier;
    their answers, and whether every one was sent before the first answer came."""
    barrier = threading.Barrier(len(requests))
    answers: list[Any] = [None] * len(requests)
    times = [(0.0, 0.0)] * len(requests)

    def one(place: int) -> None:
        method, url, headers, body = requests[place]
        try:
            with httpx.Client(timeout=timeout) as client:
                client.get(url.split("?")[0], headers=headers)  # opens the connection before the start
                built = client.build_request(method, url, headers=headers, content=body)
                barrier.wait(timeout)
                started = time.monotonic()
                answers[place] = client.send(built)
                times[place] = (started, time.monotonic())
        except Exception as exc:  # raised in the caller's thread
            barrier.abort()
            answers[place] = exc

    threads = [threading.Thread(target=one, args=(place,)) for place in range(len(requests))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    failed = [answer for answer in answers if not isinstance(answer, httpx.Response)]
    if failed:
        raise failed[0] if isinstance(failed[0], Exception) else RuntimeError("a request got no answer")
    return answers, max(start for start, _ in times) < min(end for _, end in times)
