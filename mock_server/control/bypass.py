"""The hot path as a budget: a request that asks for no control feature pays for none of them.

Faults, the admin guard, CORS and the session scope each pass on a request that carries none of
their headers, but each pass is one more ASGI layer, and together they cost a plain request a
share of its time (benchmarks/README.md, section 9). `Bypass`, just inside `LastResort`, decides
once per request, from the one scan of header names the layers share: with no fault rule (read
per request: the admin API adds them at run time), outside the admin API, and without `Prefer`,
`X-Mock-Session`, `Cookie` or `Origin`, the request goes straight to where those layers would
have handed it (`rejoin`), through a journal layer of its own and with CORS's `Vary: Origin` added
as `http.cors.CORS` adds it. Anything else takes the whole stack, unchanged.
"""

from __future__ import annotations

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

    def __init__(self, app: ASGIApp, rejoin: Rejoin, rules: FaultRules, journal: Journal) -> None:
        if rejoin.app is None:
            raise RuntimeError("Bypass must be added outside its Rejoin point")
        self.app = app
        self.rules = rules
        self.plain = RequestJournal(rejoin.app, journal, ADMIN_PREFIX)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or self.rules.rules
            or scope["path"].startswith(ADMIN_PREFIX)
            or not CONTROL_HEADERS.isdisjoint(header_names(scope))
        ):
            await self.app(scope, receive, send)
            return
        await self.plain(scope, receive, varying_origin(send))
