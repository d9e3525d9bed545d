"""Valid requests of the API answered straight by their handlers, past Connexion's layers.

Under load, a request spent most of its time in about fifteen ASGI layers of Connexion, not in the
mock. Those layers route twice, and check security, validate, set the context and prepare the
arguments (benchmarks/benchmark-history.md, "Where the time goes"). `FastPath` answers a request
itself only when it can tell that Connexion would find it valid. That takes all of these:

- Its method and path are one of the spec's operations. They are matched as Starlette matches, with
  `[^/]+` per parameter, on the routing path that `addressing.RawPath` leaves. A segment is unescaped
  as Connexion's parameters are.
- One of the operation's security requirements accepts its credentials. They are checked by the same
  functions that Connexion's security handlers call (`ApiKeys.accepts`, `Realm.verify`).
- Each of its parameters appears once. An integer one is plain digits within its schema's `format`
  range. The spec's schema accepts each, through Connexion's own parameter validator.
- A GET or DELETE has no body. A write has a declared `application/json` body within the size limit.
  The mock's own JSON body validator, the one Connexion calls, parses and accepts it.
- The reader or writer succeeds, the same one that Connexion's handler calls. A store error (404,
  409, a reference that does not resolve) changes nothing, so the request can still go on.

The answer is sent as Starlette sends the handler's response for Connexion. A JSON body gets
`Content-Type` then `Content-Length`, and a 204 gets no header.

Everything else goes on to Connexion with the body replayed, and Connexion answers as it always
does. That is missing or wrong credentials, an invalid or repeated parameter, a form body, a 404 or a
409. So the answers are the same by construction, and tests/mock_server/api/test_fastpath.py compares
the two paths byte for byte.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

from starlette.types import ASGIApp, Receive, Scope, Send

from mock_server.api.connexion_seam import CompiledParameterValidator
from mock_server.api.handlers import Answer, Reader, Writer
from mock_server.api.pagination import PageNotFound
from mock_server.api.validation import compiled, parse_json
from mock_server.http.middleware import replay
from mock_server.spec.errors import BadRequest
from mock_server.spec.inputs import integer_fits, unescape_segment
from mock_server.spec.schemas import Schema
from mock_server.state.store import StoreError
from shop_contract.document import dereference

INTEGER = re.compile(r"-?[0-9]+")
JSON = b"application/json"
Credential = Callable[[dict[bytes, list[bytes]]], bool]  # Takes a request's headers, says whether they pass.
Headers = dict[bytes, list[bytes]]
VERDICTS_KEPT = 256  # The parameter values per route whose verdict is remembered.
VERDICT_TEXT = 64  # Longer text values are judged each time, so the memory stays bounded.
UNCHECKED = frozenset({"type", "description", "example", "title"})  # No string can fail these but `type`.


@dataclass(frozen=True)
class Route:
    method: str
    pattern: re.Pattern[str]
    parameters: dict[str, Schema]  # The dereferenced parameter objects by name.
    requirements: list[list[Credential]]  # A requirement passes when all its credentials do.
    reader: Reader | None = None  # For a GET.
    writer: Writer | None = None  # For a POST, PUT, PATCH or DELETE.
    body_schema: Schema | None = None  # The application/json request body, for a write with one.
    any_text: frozenset[str] = frozenset()  # The parameters every string passes (`takes_any_text`).
    verdicts: dict[tuple[str, str, Any], bool] = field(default_factory=dict, compare=False, repr=False)

    def accepts(self, where: str, name: str, value: Any) -> bool:
        """Whether Connexion's parameter validator accepts `value` for the parameter `name`.

        The verdict is remembered per value. The validator (jsonschema) was a tenth of a GET, and
        clients send the same few values again: page numbers and sizes, and the identifiers they use.
        It is a pure function of the schema and the value, so a remembered verdict is the same.

        A string for a parameter whose schema checks nothing but the type is accepted without asking.
        An identifier never sent before, such as the one a DELETE names, missed the memory every time."""
        if name in self.any_text and type(value) is str:
            return True
        key = (where, name, value)
        verdict = self.verdicts.get(key)
        if verdict is None:
            verdict = not CompiledParameterValidator.validate_parameter(where, value, self.parameters[name])
            if isinstance(value, int) or len(value) <= VERDICT_TEXT:
                if len(self.verdicts) >= VERDICTS_KEPT:
                    self.verdicts.clear()
                self.verdicts[key] = verdict
        return verdict


def api_key_credential(header: str, accepts: Callable[[str], bool]) -> Credential:
    name = header.lower().encode()

    def check(headers: Headers) -> bool:
        values = headers.get(name, [])
        return len(values) == 1 and accepts(values[0].decode("latin-1"))

    return check


def bearer_credential(verify: Callable[[str], Any]) -> Credential:
    def check(headers: Headers) -> bool:
        values = headers.get(b"authorization", [])
        if len(values) != 1:
            return False
        parts = values[0].decode("latin-1").split(None, 1)
        return len(parts) == 2 and parts[0].lower() == "bearer" and bool(verify(parts[1]))

    return check


def fast_routes(
    spec: Schema,
    prefix: str,
    readers: dict[str, Reader],
    writers: dict[str, Writer],
    credentials: dict[str, Credential],
) -> list[Route]:
    """A route per operation of `spec` served under `prefix`. `credentials` are by scheme name."""
    routes = []
    for path, item in spec["paths"].items():
        pattern = re.compile(re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>[^/]+)", re.escape(prefix + path)))
        for method, operation in item.items():
            if not isinstance(operation, dict) or "operationId" not in operation:
                continue
            parameters = dereference([*item.get("parameters", []), *operation.get("parameters", [])], spec)
            security: list[dict[str, Any]] = operation.get("security", spec.get("security")) or []
            request_body = dereference(operation.get("requestBody", {}), spec)
            body: Schema | None = request_body.get("content", {}).get(JSON.decode())
            if request_body and body is None:
                continue  # A body, but not as JSON, is left to Connexion.
            routes.append(
                Route(
                    method=method.upper(),
                    pattern=pattern,
                    parameters={parameter["name"]: parameter for parameter in parameters},
                    requirements=[
                        [credentials[scheme] for scheme in requirement]
                        for requirement in security
                        if all(scheme in credentials for scheme in requirement)  # Connexion judges the others.
                    ],
                    reader=readers.get(operation["operationId"]),
                    writer=writers.get(operation["operationId"]),
                    body_schema=body["schema"] if body else None,
                    any_text=frozenset(p["name"] for p in parameters if takes_any_text(p)),
                )
            )
    return routes


def takes_any_text(parameter: Schema) -> bool:
    """Whether every string passes the parameter's schema, which is `type: string` with no keyword that checks."""
    schema: Schema = parameter.get("schema", {})
    return schema.get("type") == "string" and schema.keys() <= UNCHECKED


class FastPath:
    """ASGI middleware that answers a valid request of a `Route` here, and passes anything else on."""

    def __init__(self, app: ASGIApp, routes: Iterable[Route], max_body_bytes: int) -> None:
        self.app = app
        self.routes: dict[str, list[Route]] = {}  # By method, so a request is matched against its method's only.
        for route in routes:
            self.routes.setdefault(route.method, []).append(route)
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("root_path"):
            await self.app(scope, receive, send)
            return
        found = self.recognise(scope)
        if found is None:
            await self.app(scope, receive, send)
            return
        route, arguments = found
        if route.reader is not None:
            body = self.read(route, arguments, scope)
            if body is None:
                await self.app(scope, receive, send)
                return
            await answer(send, 200, body)
            return
        request_body = await self.request_body(route, receive)
        written = self.write(route, arguments, request_body)
        if written is None:
            await self.app(scope, replay(request_body, receive), send)
            return
        await answer(send, *written)

    def recognise(self, scope: Scope) -> tuple[Route, dict[str, Any]] | None:
        """The route and the typed arguments of a request Connexion would let through to its handler, or None."""
        route, path_params = self._match(scope["method"], scope["path"])
        if route is None:
            return None
        headers: Headers = {}
        for name, value in scope["headers"]:
            name = name.lower()
            if name in headers:
                headers[name].append(value)
            else:
                headers[name] = [value]
        if not passes(route.requirements, headers):
            return None
        raw_query = scope["query_string"]
        query = parse_qsl(raw_query.decode("latin-1"), keep_blank_values=True) if raw_query else []
        if len({name for name, _ in query}) != len(query):
            return None
        arguments: dict[str, Any] = {}
        for where, values in (("path", path_params.items()), ("query", query)):
            for name, text in values:
                parameter = route.parameters.get(name)
                if parameter is None:
                    if where == "path":
                        return None
                    continue  # An unknown query parameter, which Connexion ignores too.
                value = _coerce(parameter, unescape_segment(text) if where == "path" else text)
                if value is None or not route.accepts(where, name, value):
                    return None
                arguments[name] = value
        if not self._body_fits(route, headers):
            return None
        return route, arguments

    def read(self, route: Route, arguments: dict[str, Any], scope: Scope) -> bytes | None:
        assert route.reader is not None
        try:
            return route.reader(scope, **arguments)
        except (StoreError, PageNotFound):
            return None

    async def request_body(self, route: Route, receive: Receive) -> bytes:
        """The whole body, which `_body_fits` already found declared and within the limit."""
        if route.body_schema is None:
            return b""
        message = await receive()
        first: bytes = message.get("body", b"")
        if not message.get("more_body", False) or message["type"] != "http.request":
            return first  # The whole body came in one message, which is the common case.
        chunks = [first]
        more = True
        while more:
            message = await receive()
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False) and message["type"] == "http.request"
        return b"".join(chunks)

    def write(self, route: Route, arguments: dict[str, Any], raw: bytes) -> Answer | None:
        assert route.writer is not None
        if route.body_schema is not None:
            try:
                body = parse_json(raw, "utf-8")
            except BadRequest:
                return None
            if body is None or compiled(route.body_schema).first_error(body) is not None:
                return None
            arguments["body"] = body
        try:
            return route.writer(**arguments)
        except StoreError:
            return None  # Nothing changed, so Connexion will meet the same error and render it.

    def _match(self, method: str, path: str) -> tuple[Route | None, dict[str, str]]:
        for route in self.routes.get(method, ()):
            match = route.pattern.fullmatch(path)
            if match is not None:
                return route, match.groupdict()
        return None, {}

    def _body_fits(self, route: Route, headers: Headers) -> bool:
        """Whether the body fits the route.

        Where the route takes a body, it is declared, JSON and within the limit. Elsewhere there is none."""
        lengths = headers.get(b"content-length", [b"0"])
        if b"transfer-encoding" in headers or len(lengths) != 1 or not lengths[0].isdigit():
            return False
        length = int(lengths[0])
        if route.body_schema is None or route.writer is None:
            return length == 0
        return 0 < length <= self.max_body_bytes and headers.get(b"content-type") == [JSON]


def passes(requirements: list[list[Credential]], headers: Headers) -> bool:
    """Whether all the credentials of any one requirement pass. It loops, because nested generators cost more."""
    for requirement in requirements:
        for check in requirement:
            if not check(headers):
                break
        else:
            return True
    return False


async def answer(send: Send, status: int, body: bytes) -> None:
    """Send a JSON answer (none for a 204) with the headers Starlette gives a handler's response."""
    head = [(b"content-type", JSON), (b"content-length", str(len(body)).encode())] if status != 204 else []
    await send({"type": "http.response.start", "status": status, "headers": head})
    await send({"type": "http.response.body", "body": body})


def _coerce(parameter: Schema, text: str) -> Any:
    """The parameter's value as Connexion would type it, or None where this path does not judge."""
    kind = parameter["schema"].get("type")
    if kind == "string":
        return text
    if kind == "integer" and INTEGER.fullmatch(text) and integer_fits(text, parameter["schema"]):
        return int(text)  # One out of range is left to Connexion, which refuses it.
    return None
