"""The hot path as a budget: a request that asks for no control feature pays for none of them.

Faults, the admin guard, CORS, the session scope, the raw path and steering each pass on a request
that needs none of them, but each pass is one more ASGI layer, and together they cost a plain
request a share of its time (benchmarks/README.md, section 9). `Bypass`, just inside `LastResort`,
decides once per request, from the one scan of header names the layers share: with no fault rule
(read per request: the admin API adds them at run time), outside the admin API, without `Prefer`,
`X-Mock-Session`, `Cookie` or `Origin`, and with a path `RawPath` would leave as sent, the request
goes straight to where those layers would have handed it (`Rejoin`, just inside Steering), through a
journal layer of its own and with CORS's `Vary: Origin` added as `http.cors.CORS` adds it. Anything
else takes the whole stack, unchanged. With `--proxy` there is no bypass: the proxy sees every request.
"""

from __future__ import annotations

from collections.abc import Callable

from starlette.types import ASGIApp, Receive, Scope, Send

from mock_server.control.admin import PREFIX as ADMIN_PREFIX
from mock_server.control.faults import FaultRules
from mock_server.control.journal.memory import Journal, RequestJournal
from mock_server.control.sessions.registry import HEADER
from mock_server.http.cors import varying_origin
from mock_server.http.header_names import header_names

# a request carrying any of these may meet a control layer: Prefer (faults' delay, steering), a
# session (its header, or its cookie: any Cookie), an Origin (CORS)
CONTROL_HEADERS = frozenset({b"prefer", HEADER.lower().encode(), b"cookie", b"origin"})


class Rejoin:
    """Where a plain request rejoins the stack: the layer built just inside the ones it skips."""

    def __init__(self) -> None:
        self.app: ASGIApp | None = None

    def __call__(self, app: ASGIApp) -> ASGIApp:
        """Used as a middleware factory: notes the layer inside it and adds no layer of its own."""
        self.app = app
        return app


class Bypass:
    """ASGI middleware: a plain request (see the module) goes past the control layers."""

    def __init__(
        self, app: ASGIApp, rejoin: Rejoin, rules: FaultRules, journal: Journal, as_sent: Callable[[Scope], bool]
    ) -> None:
        if rejoin.app is None:
            raise RuntimeError("Bypass must be added outside its Rejoin point")
        self.app = app
        self.rules = rules
        self.as_sent = as_sent  # RawPath would leave the request as it is (`addressing.left_as_sent`)
        self.plain = RequestJournal(rejoin.app, journal, ADMIN_PREFIX)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or self.rules.rules
            or scope["path"].startswith(ADMIN_PREFIX)
            or not CONTROL_HEADERS.isdisjoint(header_names(scope))
            or not self.as_sent(scope)
        ):
            await self.app(scope, receive, send)
            return
        await self.plain(scope, receive, varying_origin(send))
