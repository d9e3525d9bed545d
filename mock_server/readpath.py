"""Valid reads of the API answered straight from the store, past Connexion's layers.

Under load, a GET spent most of its time in about fifteen ASGI layers of Connexion (routing twice,
security, validation, context, argument preparation; see benchmarks/README.md), not in the mock.
`ReadPath` answers a GET itself only when it can tell that Connexion would find it valid:

- its path is one of the spec's GET operations (matched as Starlette matches: `[^/]+` per
  parameter, on the decoded path) and it has no body;
- one of the operation's security requirements accepts its credentials, checked by the same
  functions Connexion's security handlers call (`ApiKeys.accepts`, `Realm.verify`);
- each of its parameters appears once, and an integer one is plain digits that the spec's schema,
  through Connexion's own parameter validator, accepts;
- the reader (the same one Connexion's handler calls) finds what was asked for.

Everything else (missing or wrong credentials, an invalid or repeated parameter, a 404, a body) goes
on to Connexion, which answers as it always does. So the answers are the same by construction, and
tests/test_readpath.py compares the two paths byte for byte.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

from starlette.types import ASGIApp, Receive, Scope, Send

from mock_server.handlers import Reader, public_url
from mock_server.hotpath import CompiledParameterValidator
from mock_server.pagination import PageNotFound
from mock_server.schemas import Schema, dereference
from mock_server.store import StoreError

INTEGER = re.compile(r"-?[0-9]+")
Credential = Callable[[dict[bytes, list[bytes]]], bool]  # request headers -> whether they pass


@dataclass(frozen=True)
class ReadRoute:
    pattern: re.Pattern[str]
    reader: Reader
    parameters: dict[str, Schema]  # name -> the dereferenced parameter object
    requirements: list[list[Credential]]  # any requirement passes when all its credentials do


def api_key_credential(header: str, accepts: Callable[[str], bool]) -> Credential:
    name = header.lower().encode()

    def check(headers: dict[bytes, list[bytes]]) -> bool:
        values = headers.get(name, [])
        return len(values) == 1 and accepts(values[0].decode("latin-1"))

    return check


def bearer_credential(verify: Callable[[str], Any]) -> Credential:
    def check(headers: dict[bytes, list[bytes]]) -> bool:
        values = headers.get(b"authorization", [])
        if len(values) != 1:
            return False
        parts = values[0].decode("latin-1").split(None, 1)
        return len(parts) == 2 and parts[0].lower() == "bearer" and bool(verify(parts[1]))

    return check


def read_routes(
    spec: Schema,
    prefix: str,
    readers: dict[str, Reader],
    credentials: dict[str, Credential],
) -> list[ReadRoute]:
    """A route per GET operation of `spec` served under `prefix`; `credentials` by scheme name."""
    routes = []
    for path, item in spec["paths"].items():
        operation = item.get("get")
        if operation is None:
            continue
        parameters = dereference([*item.get("parameters", []), *operation.get("parameters", [])], spec)
        pattern = re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>[^/]+)", re.escape(prefix + path))
        security = operation.get("security", spec.get("security", []))
        routes.append(
            ReadRoute(
                pattern=re.compile(pattern),
                reader=readers[operation["operationId"]],
                parameters={parameter["name"]: parameter for parameter in parameters},
                requirements=[
                    [credentials[scheme] for scheme in requirement]
                    for requirement in security
                    if all(scheme in credentials for scheme in requirement)  # others are left to Connexion
                ],
            )
        )
    return routes


class ReadPath:
    """ASGI middleware: a valid GET of a `ReadRoute` answered here, anything else passed on."""

    def __init__(self, app: ASGIApp, routes: Iterable[ReadRoute]) -> None:
        self.app = app
        self.routes = list(routes)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = self.answer(scope) if scope["type"] == "http" and scope["method"] == "GET" else None
        if body is None:
            await self.app(scope, receive, send)
            return
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    def answer(self, scope: Scope) -> bytes | None:
        """The body of the 200 answer, or None to leave the request to Connexion."""
        if scope.get("root_path"):
            return None
        path = scope["path"]
        for route in self.routes:
            match = route.pattern.fullmatch(path)
            if match is not None:
                return self._read(route, match.groupdict(), scope)
        return None

    def _read(self, route: ReadRoute, path_params: dict[str, str], scope: Scope) -> bytes | None:
        headers: dict[bytes, list[bytes]] = {}
        for name, value in scope["headers"]:
            headers.setdefault(name.lower(), []).append(value)
        if headers.get(b"content-length", [b"0"]) != [b"0"] or b"transfer-encoding" in headers:
            return None
        if not any(all(check(headers) for check in requirement) for requirement in route.requirements):
            return None
        query = parse_qsl(scope["query_string"].decode("latin-1"), keep_blank_values=True)
        if len({name for name, _ in query}) != len(query):
            return None
        arguments: dict[str, Any] = {}
        for where, values in (("path", path_params.items()), ("query", query)):
            for name, text in values:
                parameter = route.parameters.get(name)
                if parameter is None:
                    if where == "path":
                        return None
                    continue  # an unknown query parameter, which Connexion ignores too
                value = _coerce(parameter, text)
                if value is None or CompiledParameterValidator.validate_parameter(where, value, parameter):
                    return None
                arguments[name] = value
        try:
            return route.reader(public_url(scope), **arguments)
        except (StoreError, PageNotFound):
            return None


def _coerce(parameter: Schema, text: str) -> Any:
    """The parameter's value as Connexion would type it, or None where this path does not judge."""
    kind = parameter["schema"].get("type")
    if kind == "string":
        return text
    if kind == "integer" and INTEGER.fullmatch(text):
        return int(text)
    return None
