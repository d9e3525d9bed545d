"""What a request carries, decoded strictly and counted before anything converts it.

A JSON string may hold a lone surrogate, since `"x\\ud800y"` is valid JSON text. A form may hold bytes
that are not UTF-8. Once stored, either breaks every later read of the state, because a response
cannot encode it. An integer of thousands of digits makes `int()` raise, since Python refuses more
than 4,300, or spend quadratic time. JSON nested thousands deep exhausts the recursion limit.

So these rules hold wherever a request's content arrives. That is JSON, form and multipart bodies,
path and query parameters, the admin import and the fixtures.

- Text must encode as UTF-8.
- JSON may nest `MAX_JSON_DEPTH` levels, and its numbers are JSON's: finite, never `NaN`.
- An integer's digits are counted against the bounds its schema admits before it is converted.

Each refusal is a `BadRequest` naming the field.
"""

from __future__ import annotations

import json
import math
import re
import sys
import typing as t

from mock_server.spec.errors import BadRequest, MockError
from mock_server.spec.quoting import cut
from mock_server.spec.schemas import FieldError, Schema

MAX_JSON_DEPTH = 32  # A record is 2 levels deep and the admin state 3. Both are far below Python's recursion limit.
FORMAT_BOUNDS = {"int32": 2**31, "int64": 2**63}  # OpenAPI's integer formats, by magnitude.


def unencodable(value: t.Any, field: str = "") -> str | None:
    """The field of the first string in `value` that cannot be encoded as UTF-8, else None.

    Dictionary keys are included. The field is dotted, with [index] for a list item.
    """
    if isinstance(value, str):
        return None if value.isascii() or _encodes(value) else field or "(body)"
    if isinstance(value, dict):
        for key, item in value.items():
            name = f"{field}.{key}" if field else str(key)
            if isinstance(key, str) and not _encodes(key):
                return name
            found = unencodable(item, name)
            if found is not None:
                return found
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found = unencodable(item, f"{field}[{index}]")
            if found is not None:
                return found
    return None


def _encodes(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def refuse_unencodable(value: t.Any, what: str = "request body") -> None:
    field = unencodable(value)
    if field is not None:
        message = "is not valid Unicode text (a lone surrogate)"
        raise BadRequest(f"Invalid {what}: {field}: {message}", errors=[FieldError(field, message)])


def depth(value: t.Any) -> int:
    """How deeply `value` nests, found without recursion. A scalar is 0 and `[]` is 1."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, dict | list):
            deepest = max(deepest, level)
            stack.extend((item, level + 1) for item in (node.values() if isinstance(node, dict) else node))
    return deepest


def _too_deep(what: str) -> str:
    return f"The {what} is nested too deeply (at most {MAX_JSON_DEPTH} levels)."


def _not_json(constant: str) -> t.NoReturn:
    """Refuse `NaN`, `Infinity` and `-Infinity`: Python's parser reads them, but JSON has no such number.

    Read, they failed validation as "null" (orjson writes them so), or went through in an unknown field."""
    raise ValueError(f"{constant} is not a JSON number")


def _finite(text: str) -> float:
    """A number with a fraction or an exponent, refused where it is past a double's range (`1E400`).

    Python reads it as infinity, and orjson refuses it; Django REST Framework's fields refuse it too."""
    value = float(text)
    if math.isinf(value):
        raise ValueError(f"the number {cut(text)} is out of range")
    return value


def load_json(text: str, what: str = "request body") -> t.Any:
    """JSON text as Python.

    It is refused with BadRequest if malformed, nested deeper than `MAX_JSON_DEPTH`, or holding a
    string that cannot be encoded as UTF-8. The checks past parsing cost nothing for a body with few
    brackets and no `\\u` escape, which is every ordinary request.
    """
    try:
        value = json.loads(text, parse_constant=_not_json, parse_float=_finite)
    except RecursionError:
        raise BadRequest(_too_deep(what)) from None
    except ValueError as error:  # JSONDecodeError, and integers too long to convert.
        raise BadRequest(f"The {what} is not valid JSON: {error}") from None
    if text.count("[") + text.count("{") > MAX_JSON_DEPTH and depth(value) > MAX_JSON_DEPTH:
        raise BadRequest(_too_deep(what))
    if "\\u" in text:  # The only way a lone surrogate gets into text decoded as UTF-8.
        refuse_unencodable(value, what)
    return value


def digit_limit(schema: Schema) -> int:
    """The most significant digits an integer of `schema` can have.

    They come from its `minimum` and `maximum` when it has both, else from its `format`. With neither,
    they are Python's own limit.
    """
    if "minimum" in schema and "maximum" in schema:
        return len(str(max(abs(schema["minimum"]), abs(schema["maximum"]))))
    if schema.get("format") in FORMAT_BOUNDS:
        return len(str(FORMAT_BOUNDS[schema["format"]]))
    return sys.get_int_max_str_digits() or 4300


def integer_fits(value: str | int, schema: Schema) -> bool:
    """Whether an integer, or its text, is within the digits and the `format` range of `schema`.

    The text's digits are counted before it is converted, as int() reads them: underscores between
    digits (`1_000`) are no digits, so they hide none from the count. Text that is no integer at all is
    left to the validator, and so are the schema's `minimum` and `maximum`.
    """
    if isinstance(value, str):
        body = value.strip()
        digits = (body[1:] if body[:1] in ("+", "-") else body).replace("_", "")
        if not digits.isdecimal():  # What int() reads. isdigit() also admits "¹", which int() refuses.
            return True
        if len(digits) > digit_limit(schema):
            return False
        try:
            value = int(body)
        except ValueError:  # Underscores where int() takes none ("1__0", "_1"): no integer at all.
            return True
    bound = FORMAT_BOUNDS.get(schema.get("format", ""))
    return bound is None or -bound <= value < bound


def refuse_out_of_range(name: str, value: t.Any, schema: Schema, error: type[MockError] = BadRequest) -> None:
    """Raise `error`, naming `name`, if `value` is beyond what an integer of `schema` admits.

    `error` is a 400 unless told. What is admitted is what `integer_fits` says.
    """
    if schema.get("type") != "integer" or not isinstance(value, str | int) or isinstance(value, bool):
        return
    if not integer_fits(value, schema):
        admits = f"{schema['format']}" if schema.get("format") in FORMAT_BOUNDS else "its bounds"
        message = f"is out of range: more than {admits} admits ({digit_limit(schema)} digits at most)"
        raise error(f"Invalid value for {name}: {message}", errors=[FieldError(name, message)])


def not_utf8(field: str, what: str) -> BadRequest:
    message = "is not valid UTF-8"
    return BadRequest(f"Invalid {what}: {field}: {message}", errors=[FieldError(field, message)])


def decode_strictly(raw: bytes, field: str, what: str) -> str:
    """UTF-8 `raw` as text, or BadRequest naming `field`."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise not_utf8(field, what) from None


ESCAPED_IN_SEGMENTS = {"%": "%25", "/": "%2F", "\n": "%0A"}
"""What a segment of the routing path keeps escaped. `%` keeps the others unambiguous; `/` keeps the
segment one; a line feed because Starlette's `Mount` matches the rest of a path with `.*`, which stops at
one (an identifier holding a line feed was answered 404 or 307 by every request that reached Connexion)."""
_UNESCAPED = {escape: character for character, escape in ESCAPED_IN_SEGMENTS.items()}
_ESCAPE = re.compile("|".join(map(re.escape, ESCAPED_IN_SEGMENTS)))
_UNESCAPE = re.compile("|".join(map(re.escape, _UNESCAPED)))


def escape_segment(text: str) -> str:
    """An identifier as a segment of the routing path: `ESCAPED_IN_SEGMENTS` escaped, the rest as it is."""
    return _ESCAPE.sub(lambda match: ESCAPED_IN_SEGMENTS[match[0]], text)


def unescape_segment(text: str) -> str:
    """A path segment of the routing path as the identifier it stands for (`escape_segment` undone)."""
    return _UNESCAPE.sub(lambda match: _UNESCAPED[match[0]], text) if "%" in text else text
