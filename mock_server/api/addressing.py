"""Routing on the path as the client sent it, so that every identifier the mock accepts is addressable.

uvicorn decodes the path before any router sees it. So `/productlines/Slash%2FLine/` arrives as
`/productlines/Slash/Line/`, which no route matches. A byte sequence that is not UTF-8 arrives as
U+FFFD.

`RawPath` rebuilds the path from `raw_path`, one segment at a time:

- Each segment is decoded strictly. A segment that is not UTF-8 is a 400 that names its parameter.
- Each segment keeps only `%`, `/` and a line feed escaped (`inputs.escape_segment`). So every router,
  the fast path's and Connexion's, matches one segment per parameter, and Starlette's `Mount` (`.*`)
  the whole path.
- `inputs.unescape_segment` turns a segment back into the identifier. Connexion's path parameters go
  through it in `BoundedURIParser`, below.
- A path without `%` is left as it is. So the hot path pays for one `in` test and nothing more.

It also counts the digits of an integer path parameter against the spec's bounds before any router
converts it. It does so because Starlette's `int` convertor would raise past 4,300 digits. That, too,
costs only a regular expression search, unless the path holds a digit run longer than every bound.
Such a path is a 404 that names the parameter. That is the spec's decision for a path parameter that
is not of its type.
"""

from __future__ import annotations

import re
import sys
import typing as t
from dataclasses import dataclass
from urllib.parse import unquote_to_bytes

from starlette.types import ASGIApp, Receive, Scope, Send

from mock_server.api.connexion_seam import URIParserAdapter
from mock_server.spec.errors import BadRequest, MockError, problem_bytes
from mock_server.spec.inputs import digit_limit, escape_segment, not_utf8, refuse_out_of_range, unescape_segment
from mock_server.spec.schemas import Schema
from shop_contract.document import dereference


class NotOfItsType(MockError):
    """A path parameter that is not of its type. The spec answers 404, as for no such resource."""

    status = 404


@dataclass(frozen=True)
class Template:
    """A path of the spec under its mount, as literal segments and parameters by position."""

    segments: tuple[str, ...]
    parameters: dict[int, tuple[str, Schema]]  # From a segment's index to the parameter's name and schema.

    def matches(self, segments: list[str], skip: int = -1) -> bool:
        return len(segments) == len(self.segments) and all(
            index in self.parameters or index == skip or literal == segments[index]
            for index, literal in enumerate(self.segments)
        )


def templates(spec: Schema, mounts: dict[str, list[str]]) -> list[Template]:
    """A `Template` per spec path under each mount. `mounts` maps each prefix to its paths."""
    found = []
    for prefix, paths in mounts.items():
        for path in paths:
            item = spec["paths"][path]
            declared = {
                parameter["name"]: parameter["schema"]
                for parameter in dereference(item.get("parameters", []), spec)
                if parameter["in"] == "path"
            }
            segments = tuple((prefix + path).split("/"))
            parameters = {
                index: (segment[1:-1], declared.get(segment[1:-1], {}))
                for index, segment in enumerate(segments)
                if segment.startswith("{") and segment.endswith("}")
            }
            found.append(Template(segments, parameters))
    return found


def long_digits(templates: list[Template]) -> re.Pattern[str]:
    """A digit run longer than any integer path parameter's bounds admit. Such a run may be out of bounds."""
    limits = [
        digit_limit(schema)
        for template in templates
        for _, schema in template.parameters.values()
        if schema.get("type") == "integer"
    ]
    return re.compile(f"[0-9]{{{min(limits, default=sys.maxsize) + 1},}}")


def left_as_sent(templates: list[Template]) -> t.Callable[[Scope], bool]:
    """Whether `RawPath` leaves a request as it is. It does when nothing is escaped and no digit run needs a
    bound."""
    digits = long_digits(templates)

    def untouched(scope: Scope) -> bool:
        return b"%" not in scope.get("raw_path", b"%") and digits.search(scope["path"]) is None

    return untouched


class RawPath:
    """ASGI middleware that rebuilds the routing path from `raw_path` and bounds integer path parameters."""

    def __init__(self, app: ASGIApp, templates: list[Template]) -> None:
        self.app = app
        self.templates = templates
        self.long_digits = long_digits(templates)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        raw = scope.get("raw_path")
        try:
            if raw and b"%" in raw:
                scope = {**scope, "path": self.routing_path(raw)}
            if self.long_digits.search(scope["path"]):
                self.bound_integers(scope["path"])
        except MockError as error:
            body = problem_bytes(error.status, error.detail, error.errors)
            headers = [(b"content-type", b"application/problem+json"), (b"content-length", str(len(body)).encode())]
            await send({"type": "http.response.start", "status": error.status, "headers": headers})
            await send({"type": "http.response.body", "body": body})
            return
        await self.app(scope, receive, send)

    def routing_path(self, raw: bytes) -> str:
        """`raw` decoded segment by segment, with `%` and `/` inside a segment escaped again."""
        segments = raw.split(b"/")
        decoded = []
        for index, segment in enumerate(segments):
            try:
                text = unquote_to_bytes(segment).decode("utf-8")
            except UnicodeDecodeError:
                raise not_utf8(self._name(segments, index), "path") from None
            decoded.append(escape_segment(text))
        return "/".join(decoded)

    def bound_integers(self, path: str) -> None:
        segments = path.split("/")
        for template in self.templates:
            if template.matches(segments):
                for index, (name, schema) in template.parameters.items():
                    refuse_out_of_range(name, segments[index], schema, error=NotOfItsType)

    def _name(self, raw_segments: list[bytes], index: int) -> str:
        """The name of the parameter at `index` of a path, for an error message. It is "path" if none is."""
        segments = [segment.decode("latin-1") for segment in raw_segments]
        for template in self.templates:
            if index in template.parameters and template.matches(segments, skip=index):
                return template.parameters[index][0]
        return "path"


class BoundedURIParser(URIParserAdapter):
    """Connexion's parameter and form parser, with integers bounded and path parameters unescaped.

    Each integer's range is checked before Connexion converts it, and its digits are counted first. Path
    parameters are unescaped because `RawPath` leaves the `%` and `/` of an identifier escaped in the
    routing path."""

    def resolve_params(self, params: dict[str, t.Any], _in: str) -> dict[str, t.Any]:
        for name, values in params.items():
            schema = self.param_schemas.get(name)
            if schema:
                for value in [values] if _in == "path" else values:
                    refuse_out_of_range(name, value, schema, error=NotOfItsType if _in == "path" else BadRequest)
        if _in == "path":
            params = {name: _unescape(value) for name, value in params.items()}
        resolved: dict[str, t.Any] = super().resolve_params(params, _in)
        return resolved

    def resolve_form(self, form_data: dict[str, t.Any]) -> dict[str, t.Any]:
        properties = (self.body_schema or {}).get("properties", {})
        for name, values in form_data.items():
            for value in values if isinstance(values, list) else [values]:
                refuse_out_of_range(name, value, properties.get(name, {}))
        resolved: dict[str, t.Any] = super().resolve_form(form_data)
        return resolved


def _unescape(value: t.Any) -> t.Any:
    return unescape_segment(value) if isinstance(value, str) else value
