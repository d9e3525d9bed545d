"""Starlette's CORS middleware, with the common request made cheap. That request has no `Origin` header.

Every request but a browser's cross-origin one comes without `Origin`. To such a request, Starlette's
`CORSMiddleware` only adds `Vary: Origin` to the answer. But it builds a `Headers` of the request and a
`MutableHeaders` of the answer to do so. That costs about 8 us per request in process, against 2 here
(benchmarks/benchmark-history.md, "After issues 9-14"). `CORS` adds the same header with plain lists.
It leaves to Starlette's code every request with an `Origin`, simple or preflight. It also leaves to
Starlette any answer that already has a `Vary`.
"""

from __future__ import annotations

from starlette.datastructures import MutableHeaders
from starlette.middleware.cors import CORSMiddleware
from starlette.types import Message, Receive, Scope, Send

from mock_server.http.header_names import header_names

VARY = b"vary"


class CORS(CORSMiddleware):
    """`CORSMiddleware` with the same answers. A request without `Origin` is passed on with a lighter `send`."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or b"origin" in header_names(scope):
            await super().__call__(scope, receive, send)
            return
        await self.app(scope, receive, varying_origin(send))


def varying_origin(send: Send) -> Send:
    """`send`, with `Vary: Origin` added to the start of the answer by `add_vary_origin`."""

    async def vary_origin(message: Message) -> None:
        if message["type"] == "http.response.start":
            add_vary_origin(message)
        await send(message)

    return vary_origin


def add_vary_origin(message: Message) -> None:
    """What `CORSMiddleware.send` does to the start of an answer to a request without `Origin`."""
    headers = message.get("headers", [])
    for name, _ in headers:
        if name == VARY:  # Merged into one Vary, as Starlette does.
            mutable = MutableHeaders(scope=message)
            mutable["Vary"] = ", ".join([*mutable.getlist("Vary"), "Origin"])
            return
    message["headers"] = [*headers, (VARY, b"Origin")]
