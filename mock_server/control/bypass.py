"""The hot path as a budget: a request that asks for no control feature pays for none of them.

Faults, the admin guard, CORS, the session scope, the raw path and steering each pass on a request
that needs none of them, and Connexion's outer layers (its middleware entry, Starlette's error
middleware, which watches every `send`) do nothing for a request the mock answers itself; but each
pass is one more ASGI layer, and together they cost a plain request a share of its time
(benchmarks/README.md, section 9). The app (`app.MockApp`) asks `Bypass.takes` once per request,
from the one scan of header names the layers share: with no fault rule that could meet it (read
per request: the admin API changes them at run time; `FaultRules.passes`), outside the admin API,
without `Prefer`, `X-Mock-Session`, `Cookie` or `Origin`, and with a path `RawPath` would leave
as sent, the request goes straight to where those layers would have handed it (the rejoin point,
just inside Steering), through a `LastResort` and a journal layer of its own, with CORS's
`Vary: Origin` added as `http.cors.CORS` adds it. Anything else takes the whole stack, unchanged.
With `--proxy` there is no bypass: the proxy sees every request.
"""

from __future__ import annotations

from collections.abc import Callable

from starlette.types import ASGIApp, Receive, Scope, Send

from mock_server.control.admin import PREFIX as ADMIN_PREFIX
from mock_server.control.faults.memory import FaultRules
from mock_server.control.journal.base import Journal
from mock_server.control.journal.middleware import RequestJournal
from mock_server.control.mock_sessions.registry import HEADER
from mock_server.http.cors import varying_origin
from mock_server.http.header_names import header_names
from mock_server.http.middleware import LastResort

# a request carrying any of these may meet a control layer: Prefer (faults' delay, steering), a
# session (its header, or its cookie: any Cookie), an Origin (CORS)
CONTROL_HEADERS = frozenset({b"prefer", HEADER.lower().encode(), b"cookie", b"origin"})


class Bypass:
    """The way past the control layers; added to the stack (as a middleware factory) at the rejoin point."""

    def __init__(self, rules: FaultRules, journal: Journal, as_sent: Callable[[Scope], bool]) -> None:
        self.rules = rules
        self.journal = journal
        self.as_sent = as_sent  # RawPath would leave the request as it is (`addressing.left_as_sent`)
        self.plain: ASGIApp | None = None  # built with the stack, at the rejoin point

    def __call__(self, app: ASGIApp) -> ASGIApp:
        """The rejoin point: notes the layer inside it (adding no layer to the stack)."""
        self.plain = LastResort(RequestJournal(app, self.journal, ADMIN_PREFIX))
        return app

    def takes(self, scope: Scope) -> bool:
        """Whether the request needs no control layer (see the module)."""
        return (
            self.plain is not None
            and scope["type"] == "http"
            and not scope["path"].startswith(ADMIN_PREFIX)
            and CONTROL_HEADERS.isdisjoint(header_names(scope))
            and self.as_sent(scope)
            and self.rules.passes(scope)
        )

    async def serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        assert self.plain is not None  # `takes` said so
        await self.plain(scope, receive, varying_origin(send))
