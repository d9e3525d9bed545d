"""ASGI middleware around Connexion's stack, each fixing or adding one thing.

- `BodyLimit`: 413 for a body over the limit, without reading past the limit.
- `AllowHeader`: Connexion registers one route per (path, method), so its 405 lists only some of a
  path's methods and a plain OPTIONS gets 405; this answers both from the spec's paths.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mock_server.errors import problem_bytes

METHODS = ("get", "put", "post", "patch", "delete")


async def send_problem(send: Send, status: int, detail: str, headers: Iterable[tuple[str, str]] = ()) -> None:
    body = problem_bytes(status, detail)
    raw = [(b"content-type", b"application/problem+json"), (b"content-length", str(len(body)).encode())]
    raw += [(name.encode(), value.encode()) for name, value in headers]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


def replay(body: bytes, receive: Receive) -> Receive:
    """A `receive` that gives a body already read, whole, then whatever the client sends next."""
    sent = False

    async def replayed() -> Message:
        nonlocal sent
        if sent:
            return await receive()
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replayed


class BodyLimit:
    """413 for a body over the limit, read no further than the limit.

    A declared Content-Length over the limit is refused before reading. A body without one
    (chunked) is buffered up to the limit and passed on with its Content-Length, since Connexion
    reads a request body only when its length is declared.
    """

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        length = headers.get("content-length")
        if length is not None:
            if length.isdigit() and int(length) > self.max_bytes:
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
                return  # the client went away
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
    """Answers OPTIONS (not CORS preflight) and corrects `Allow` on 405 from the spec's paths."""

    def __init__(self, app: ASGIApp, routes: dict[str, Any]) -> None:
        self.app = app
        self.routes = [(re.compile(pattern), methods) for pattern, methods in routes.items()]

    @staticmethod
    def table(spec: dict[str, Any], mounts: dict[str, list[str]]) -> dict[str, str]:
        """{path regex: "GET, POST, ..."} for the spec's paths under each mount (prefix -> paths)."""
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
