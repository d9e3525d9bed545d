"""ASGI middleware around Connexion's stack, each fixing or adding one thing.

- `LastResort` turns any exception that escapes everything else into a problem+json 500. It logs
  the exception once with its traceback, each part of it cut (`quoting.cut`), because an exception's
  message may quote a 1 MiB value. Connexion's own last-resort handler is broken with Starlette 1.x:
  it hands Starlette a coroutine where a response is expected.
- `BodyLimit` answers 413 for a body over the limit, without reading past the limit. It hands on a
  Content-Type's media type in lower case, since Connexion parses a body as JSON only when it is.
- `AllowHeader` answers from the spec's paths. Connexion registers one route per (path, method), so
  its 405 lists only some of a path's methods, and a plain OPTIONS gets 405.
- `SlashRedirect` sends a spec path without its trailing slash to the one with it, as Starlette's router
  did, but at the origin the client called (`forwarded.public_origin`). Starlette's named the Host the
  request reached: behind a proxy that sets X-Forwarded-Host, an address the client cannot reach.

`chain` builds a list of starlette `Middleware` entries around an app, as Starlette builds its own.
"""

from __future__ import annotations

import contextlib
import logging
import re
import traceback
from collections.abc import Iterable, Sequence
from typing import Any

from starlette.datastructures import Headers, MutableHeaders
from starlette.middleware import Middleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mock_server.http.forwarded import public_origin
from mock_server.spec.errors import problem_bytes
from mock_server.spec.quoting import cut

METHODS = ("get", "put", "post", "patch", "delete")
NO_CONTENT_TYPE = (
    "The request has a body but no Content-Type: send application/json, "
    "application/x-www-form-urlencoded or multipart/form-data."
)
INTERNAL_ERROR = "The mock met an unexpected error; nothing was changed."
logger = logging.getLogger("mock_server")


def chain(entries: Sequence[Middleware], app: ASGIApp) -> ASGIApp:
    """`entries` built around `app`, the first one outermost."""
    for cls, args, kwargs in reversed(entries):
        app = cls(app, *args, **kwargs)
    return app


def log_unexpected(error: BaseException) -> None:
    """Log one record, with the traceback, for an error the mock did not expect.

    Each part of the traceback is cut, so that no message in it, of the error or of a chained one, is
    logged whole."""
    parts = traceback.TracebackException.from_exception(error).format()
    logger.error("Unexpected error: %s\n%s", cut(repr(error)), "".join(cut(part) for part in parts).rstrip())


async def send_problem(send: Send, status: int, detail: str, headers: Iterable[tuple[str, str]] = ()) -> None:
    await send_whole(send, status, problem_bytes(status, detail), "application/problem+json", headers)


async def send_whole(
    send: Send, status: int, body: bytes, media_type: str, headers: Iterable[tuple[str, str]] = ()
) -> None:
    """Send a whole response: `body` of `media_type`, with its length and `headers`."""
    raw = [(b"content-type", media_type.encode()), (b"content-length", str(len(body)).encode())]
    raw += [(name.encode(), value.encode()) for name, value in headers]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


def replay(body: bytes, receive: Receive) -> Receive:
    """A `receive` that gives a body already read, whole, and then whatever the client sends next."""
    sent = False

    async def replayed() -> Message:
        nonlocal sent
        if sent:
            return await receive()
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replayed


class LastResort:
    """The outermost of the mock's middleware, which makes an unexpected exception a 500, never uvicorn's text.

    The 500 is in the spec's Problem shape. If the response had started, the connection is closed
    instead. It does not watch `send`, so the hot path pays only one `try`. If the response had
    started, the server refuses the second start and closes the connection."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await self.app(scope, receive, send)
        except Exception as error:
            if scope["type"] != "http":
                raise
            log_unexpected(error)
            with contextlib.suppress(Exception):  # The response had started, so there is nothing more to say.
                await send_problem(send, 500, INTERNAL_ERROR)


def lower_case_media_type(scope: Scope) -> Scope:
    """`scope` with its Content-Type's media type in lower case, and its parameters as sent.

    A media type's letters count in either case (RFC 9110, section 8.3.1), as Django REST Framework
    reads them. Connexion parses a body as JSON only when its type is in lower case. So it handed the
    handler the bytes of an `APPLICATION/JSON` body, a 500. A parameter's value, such as a multipart
    boundary, may count letter case, so it stays as sent."""
    headers = scope["headers"]
    for index, (name, value) in enumerate(headers):
        if name == b"content-type":
            media_type, semicolon, parameters = value.partition(b";")
            if media_type == media_type.lower():
                return scope
            lowered = list(headers)
            lowered[index] = (name, media_type.lower() + semicolon + parameters)
            return {**scope, "headers": lowered}
    return scope


class BodyLimit:
    """413 for a body over the limit, read no further than the limit, and 415 for a body without a Content-Type.

    The 415 is a decision, because guessing JSON would hand the handler bytes Connexion never parsed.
    For the same reason, a media type goes on in lower case (`lower_case_media_type`).

    A declared Content-Length over the limit is refused before reading. A body without one (chunked)
    is buffered up to the limit and passed on with its Content-Length. That is because Connexion reads
    a request body only when its length is declared.
    """

    def __init__(self, app: ASGIApp, max_bytes: int, api_prefixes: tuple[str, ...] = ()) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.api_prefixes = api_prefixes  # Where a body needs a Content-Type. The admin import is JSON anyway.

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        scope = lower_case_media_type(scope)
        headers = Headers(scope=scope)
        length = headers.get("content-length")
        typeless = "content-type" not in headers and (length not in (None, "0") or "transfer-encoding" in headers)
        if typeless and scope["path"].startswith(self.api_prefixes):
            await send_problem(send, 415, NO_CONTENT_TYPE)
            return
        if length is not None:
            if length.isdecimal() and int(length) > self.max_bytes:
                await self._refuse(send)
            else:
                await self.app(scope, receive, send)
            return
        if "chunked" not in headers.get("transfer-encoding", "").lower():
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        size = 0
        more = True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                return  # The client went away.
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            more = message.get("more_body", False)
            if size > self.max_bytes:
                await self._refuse(send)
                return
        body = b"".join(chunks)
        replayed = {**scope, "headers": [*scope["headers"], (b"content-length", str(size).encode())]}
        await self.app(replayed, replay(body, receive), send)

    async def _refuse(self, send: Send) -> None:
        detail = f"The request body is larger than {self.max_bytes} bytes."
        await send_problem(send, 413, detail, [("connection", "close")])


class AllowHeader:
    """Answers OPTIONS (not a CORS preflight), and corrects `Allow` on a 405, from the spec's paths."""

    def __init__(self, app: ASGIApp, routes: dict[str, Any]) -> None:
        self.app = app
        self.routes = [(re.compile(pattern), methods) for pattern, methods in routes.items()]

    @staticmethod
    def table(spec: dict[str, Any], mounts: dict[str, list[str]]) -> dict[str, str]:
        """{path regex: "GET, POST, ..."} for the spec's paths under each mount. `mounts` maps a prefix to its paths."""
        routes = {}
        for prefix, paths in mounts.items():
            for path in paths:
                item = spec["paths"][path]
                pattern = re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(prefix + path))
                methods = sorted(m.upper() for m in item if m in METHODS)
                routes[f"^{pattern}$"] = ", ".join([*methods, "OPTIONS"] + (["HEAD"] if "GET" in methods else []))
        return routes

    def allowed(self, path: str) -> str | None:
        return next((methods for pattern, methods in self.routes if pattern.match(path)), None)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        allowed = self.allowed(scope["path"])
        if allowed is None:
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        if scope["method"] == "OPTIONS" and "access-control-request-method" not in headers:
            raw = [(b"allow", allowed.encode()), (b"content-length", b"0")]
            await send({"type": "http.response.start", "status": 204, "headers": raw})
            await send({"type": "http.response.body", "body": b""})
            return

        async def fix_allow(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] == 405:
                MutableHeaders(scope=message)["allow"] = allowed
            await send(message)

        await self.app(scope, receive, fix_allow)


class SlashRedirect:
    """307 from a spec path sent without its trailing slash to the path with it, its query kept."""

    def __init__(self, app: ASGIApp, routes: dict[str, Any]) -> None:
        self.app = app
        self.routes = [re.compile(pattern) for pattern in routes]  # `AllowHeader.table`'s.

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope["path"] if scope["type"] == "http" else "/"
        if path.endswith("/") or not any(route.match(f"{path}/") for route in self.routes):
            await self.app(scope, receive, send)
            return
        sent = (scope.get("raw_path") or path.encode()).decode("latin-1")  # As sent: escapes stay escaped.
        query = scope.get("query_string", b"").decode("latin-1")
        location = f"{public_origin(scope)}{sent}/{'?' if query else ''}{query}"
        headers = [(b"location", location.encode("latin-1")), (b"content-length", b"0")]
        await send({"type": "http.response.start", "status": 307, "headers": headers})
        await send({"type": "http.response.body", "body": b""})
