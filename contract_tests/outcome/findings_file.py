"""A findings.json read back (by `shop-contract merge`): bounded, then valid against findings.schema.json.

A report directory comes from another runner, so its file is input like any other. It is read in
these steps, and none of it is used before the last:

- It is read up to the schema's `x-max-bytes`.
- Its nesting and its items are counted up to `x-max-depth` and `x-max-items`, before Python's
  recursive parser sees it. A key given twice in one object is found there too.
- Its numbers must be finite, and its strings Unicode text.
- It must be valid against the schema the suite owns.

`repeated` checks what the schema cannot say. What names one thing names only one: a violation's id,
a check's passes, a baseline entry, an operation's coverage. Two violations with one id would be
replayed as one.

Every refusal is one `FindingsError` that names the file and the field by a JSON pointer. It never
quotes the value, because the value may be huge, or made to act on a terminal.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema

from shop_contract.files import TooLarge, read_at_most

SCHEMA_NAME = "findings.schema.json"

_TOKEN = re.compile(r'"[^"\\]*+(?:\\.[^"\\]*+)*+"?|[\[\]{},:]', re.DOTALL)
"""What the shape count looks at: strings and punctuation.

A string is skipped whole and possessively, with no backtracking. So an unclosed string costs one pass,
not one per quote."""
_SHOWN = 60
"""Characters of a key shown in a pointer."""


class FindingsError(Exception):
    """The file is not a findings.json this suite can use. `pointer` says where."""

    def __init__(self, path: Path, pointer: str, problem: str) -> None:
        where = f" at {pointer}" if pointer else ""
        super().__init__(f"{path}{where}: {problem}")
        self.path, self.pointer, self.problem = path, pointer, problem


@cache
def schema(name: str = SCHEMA_NAME) -> dict[str, Any]:
    """A schema shipped in this package. It is findings.json's by default, and consumer_contract.schema.json
    is another."""
    document: dict[str, Any] = json.loads(resources.files("contract_tests.outcome").joinpath(name).read_text())
    return document


def load(path: Path, schema_name: str = SCHEMA_NAME) -> dict[str, Any]:
    """The document in `path`, valid against `schema(schema_name)` and within its `x-max-*` bounds.

    It raises FindingsError otherwise, and OSError if the file is unreadable."""
    rules = schema(schema_name)
    limit, depth, items = rules["x-max-bytes"], rules["x-max-depth"], rules["x-max-items"]
    try:
        raw = read_at_most(path, limit)
    except TooLarge as exc:
        raise FindingsError(path, "", str(exc.strerror)) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FindingsError(path, "", f"not UTF-8 (byte {exc.start})") from None
    misshapen = shape_problem(text, depth, items)
    if misshapen is not None:
        raise FindingsError(path, pointer(misshapen[0]), misshapen[1])
    try:
        document = json.loads(text, parse_constant=_refuse_constant, parse_float=_finite)
    except json.JSONDecodeError as exc:
        raise FindingsError(path, "", f"not JSON ({exc.msg}, line {exc.lineno} column {exc.colno})") from None
    except ValueError as exc:  # A number past float's range, or an integer past int()'s digit limit.
        raise FindingsError(path, "", f"not JSON this suite reads ({str(exc).split(':')[0]})") from None
    unreadable = not_text(document)
    if unreadable is not None:
        raise FindingsError(path, pointer(unreadable), "a string that is not Unicode text (a lone surrogate)")
    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(rules).iter_errors(document))
    if error is not None:
        where, problem = said(error, rules.get("x-document", "findings.json"))
        raise FindingsError(path, pointer(where), problem)
    again = repeated(document) if schema_name == SCHEMA_NAME else None
    if again is not None:
        raise FindingsError(path, pointer(again[0]), again[1])
    valid: dict[str, Any] = document
    return valid


def repeated(document: dict[str, Any]) -> tuple[list[str | int], str] | None:
    """Where a findings.json valid against its schema names one thing twice, and what the first is.

    The names are a violation's id (new or accepted), a check's passes (surface, operation, check), a
    baseline entry's fingerprint, and an operation's coverage (surface, operation). The answer is None
    when every name is unique."""
    judged = document.get("baseline") or {}
    named: list[tuple[str, list[tuple[list[str | int], Any]]]] = [
        (
            "the same id as",
            [(["violations", n, "id"], v["id"]) for n, v in enumerate(document["violations"])]
            + [(["baseline", "accepted", n, "id"], v["id"]) for n, v in enumerate(judged.get("accepted", []))],
        ),
        (
            "the same check as",
            [(["passes", n], (p["surface"], p["operation"], p["check"])) for n, p in enumerate(document["passes"])],
        ),
        (
            "the same defect as",
            [
                (["baseline", "entries", n, "fingerprint"], e["fingerprint"])
                for n, e in enumerate(judged.get("entries", []))
            ],
        ),
        (
            "the same operation as",
            [
                (["coverage", "operations", n], (o["surface"], o["operation"]))
                for n, o in enumerate(document["coverage"]["operations"])
            ],
        ),
    ]
    for saying, names in named:
        first: dict[Any, list[str | int]] = {}
        for where, name in names:
            if name in first:
                return where, f"{saying} {pointer(first[name])}"
            first[name] = where
    return None


def shape_problem(text: str, depth: int, items: int) -> tuple[list[str | int], str] | None:
    """Where JSON `text` first breaks a shape rule, and which; None when it breaks none.

    The rules are: no nesting deeper than `depth`, no more than `items` array elements and object
    members, and no key given twice in one object.

    It is one linear pass over the punctuation. Strings are skipped whole by a regex without
    backtracking. So a file nested 100,000 deep costs no recursion. A file of a million tiny values is
    refused before it becomes a million objects. A key given twice is found here, where its place is
    known, because the parser would keep the last one without a word. It assumes nothing of the syntax,
    because json.loads judges that afterwards."""
    path: list[str | int] = []
    expects_key: list[bool] = []  # Per open container, whether it is an object waiting for its next key.
    keys: list[set[str]] = []  # Per open container, the keys its object has had.
    counted = 0
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token in ("[", "{", ","):
            counted += 1
            if counted > items:
                return path, f"more than {items} items"
        if token in ("[", "{"):
            if len(path) == depth:
                return path, f"nested deeper than {depth} levels"
            path.append(0 if token == "[" else "")
            expects_key.append(token == "{")
            keys.append(set())
        elif token in ("]", "}"):
            if path:
                path.pop()
                expects_key.pop()
                keys.pop()
        elif token == ",":
            if path and isinstance(path[-1], int):
                path[-1] += 1
            elif path:
                expects_key[-1] = True
        elif token == ":":
            if path:
                expects_key[-1] = False
        elif path and expects_key[-1]:
            key = path[-1] = _key(token)
            if key in keys[-1]:
                return path, "a key given twice"
            keys[-1].add(key)
    return None


def _key(token: str) -> str:
    try:
        key: str = json.loads(token)
    except ValueError:
        return token[1:-1]
    return key


def not_text(document: Any) -> list[str | int] | None:
    """The path of the first string, key or value, in `document` that UTF-8 cannot encode. None if none."""
    stack: list[tuple[list[str | int], Any]] = [([], document)]
    while stack:
        path, value = stack.pop()
        items: Iterable[tuple[str | int, Any]]
        if isinstance(value, dict):
            items = value.items()
        elif isinstance(value, list):
            items = enumerate(value)
        else:
            if isinstance(value, str) and not _encodes(value):
                return path
            continue
        for key, item in items:
            if isinstance(key, str) and not _encodes(key):
                return [*path, key]
            stack.append(([*path, key], item))
    return None


def _encodes(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _refuse_constant(name: str) -> None:
    raise ValueError(f"{name} is not a JSON number")


def _finite(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise ValueError(f"{text[:20]} is out of range")
    return number


def said(error: jsonschema.ValidationError, document: str) -> tuple[list[str | int], str]:
    """Where the schema is broken and how. It speaks in words of the schema, never of the untrusted value."""
    where: list[str | int] = list(error.absolute_path)
    keyword, expected, instance = error.validator, error.validator_value, error.instance
    if keyword == "required":
        return [*where, next(name for name in expected if name not in instance)], "missing"
    if keyword == "additionalProperties":
        known = error.schema.get("properties", {})
        return [*where, next(name for name in instance if name not in known)], f"not a field of {document}"
    if keyword == "type":
        wanted = " or ".join(expected) if isinstance(expected, list) else expected
        return where, f"expected {wanted}, got {_type_name(instance)}"
    if keyword in ("const", "enum"):
        return where, f"must be {' or '.join(json.dumps(v) for v in (expected if keyword == 'enum' else [expected]))}"
    if keyword == "pattern":
        return where, f"does not match {expected}"
    if keyword == "not" and "x-not-problem" in error.schema:  # The schema's words for what its `not` refuses.
        return where, str(error.schema["x-not-problem"])
    if keyword in ("minimum", "minLength", "maxLength", "maxItems"):
        return where, f"{keyword} is {expected}"
    return where, f"fails the schema's {keyword}"


def _type_name(value: Any) -> str:
    """The JSON type of a parsed value."""
    names = ((bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"), (list, "array"))
    return next((name for kind, name in names if isinstance(value, kind)), "null" if value is None else "object")


def pointer(path: Iterable[str | int]) -> str:
    """A JSON pointer (RFC 6901) to `path`. Each key is cut to a readable length and escaped onto one line."""
    parts = []
    for part in path:
        text = str(part).replace("~", "~0").replace("/", "~1")
        shown = json.dumps(text[:_SHOWN])[1:-1] + ("..." if len(text) > _SHOWN else "")
        parts.append("/" + shown)
    return "".join(parts)
