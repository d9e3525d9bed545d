"""The layer that records each HTTP exchange in the journal, bodies up to `BODY_LIMIT` + 1 bytes."""

from __future__ import annotations

import time
from collections.abc import Callable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mock_server.control.journal.base import BODY_LIMIT, FAULT, NO_HEADERS, VIOLATIONS, Journal


class RequestJournal:
    """ASGI middleware that records each HTTP exchange in the `Journal`, bodies up to `BODY_LIMIT` + 1 bytes.

    Requests under `unrecorded` are not recorded, so reading the journal does not fill it. That is the
    admin API, as WireMock leaves out /__admin.

    `done`, if given, is told of each recorded exchange too, with its status and its seconds. It is
    the bypass's request observer (control/observe.py), which this layer's tap spares a tap of its own.
    """

    def __init__(
        self,
        app: ASGIApp,
        journal: Journal,
        unrecorded: str,
        done: Callable[[Scope, int | None, float], None] | None = None,
    ) -> None:
        self.app = app
        self.journal = journal
        self.unrecorded = unrecorded
        self.done = done

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"].startswith(self.unrecorded):
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status: int | None = None
        response_headers = NO_HEADERS
        request_body = b""
        response_body = b""

        async def tap_receive() -> Message:
            nonlocal request_body
            message = await receive()
            if len(request_body) <= BODY_LIMIT and message["type"] == "http.request":
                request_body += message.get("body", b"")[: BODY_LIMIT + 1 - len(request_body)]
            return message

        async def tap_send(message: Message) -> None:
            nonlocal status, response_headers, response_body
            if message["type"] == "http.response.start":
                status = message["status"]
                response_headers = message.get("headers", NO_HEADERS)
            elif len(response_body) <= BODY_LIMIT and message["type"] == "http.response.body":
                response_body += message.get("body", b"")[: BODY_LIMIT + 1 - len(response_body)]
            await send(message)

        try:
            await self.app(scope, tap_receive, tap_send)
        finally:
            fault = scope.get(FAULT)
            if fault is not None:  # The delay was spent before this layer, and the client waited for it too.
                started -= fault["delay_ms"] / 1000
            if status is None and fault is None:
                status = 500  # The server answers 500 to a crash.
            violations = scope.get(VIOLATIONS)
            self.journal.record(
                scope, started, status, response_headers, request_body, response_body, fault, violations
            )
            if self.done is not None:
                self.done(scope, status, time.perf_counter() - started)
