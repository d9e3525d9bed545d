"""The hot path as a budget: a request that asks for no control feature pays for none of them.

Faults, the journal, the admin guard, CORS, the session scope, the raw path and steering each pass
on a request that needs none of them. Each pass is one more ASGI layer, and together they cost a
plain request a share of its time (benchmarks/benchmark-history.md, "The hot path as a budget"). So
`Bypass` holds those layers and asks `takes` once per request, from the one scan of header names the
layers share.

A request takes the bypass when no fault rule could meet it, when it is outside the admin API,
when it sends none of `Prefer`, `X-Mock-Session`, `Cookie` and `Origin`, and when `RawPath` would
leave its path as sent. The fault rules are read per request, because the admin API changes them
at run time (`FaultRules.passes`). Such a request goes to the layer after the control layers
through a `LastResort` and a journal layer of its own. It gets CORS's `Vary: Origin`, added as
`http.cors.CORS` adds it. Any other request takes the control layers, unchanged. With `--proxy`
there is no bypass, because the proxy sees every request (`mock_server.stack.with_bypass`).

Connexion's entry and its error middleware, outside this layer, do nothing for a request the bypass
takes either, and passing them cost GET one an eighth of its time (benchmarks/benchmark-history.md,
"The declarative stack and the bypass"). So the app's entry (`app.MockApp`) asks this layer
(`takes`), once Connexion has built it, and serves a request it takes itself (`serve`); a request it
does not take is marked, and goes the whole way when it meets this layer in the stack, without being
asked twice. A request served from the app's entry passes no observer layer either, so this layer's
journal tells the observer of it (`observer`, control/observe.py); one it takes in the stack was
watched outside.
"""

from __future__ import annotations

from collections.abc import Callable

from starlette.middleware import Middleware
from starlette.types import ASGIApp, Receive, Scope, Send

from mock_server.control.admin import PREFIX as ADMIN_PREFIX
from mock_server.control.faults.memory import FaultRules
from mock_server.control.journal.base import Journal
from mock_server.control.journal.middleware import RequestJournal
from mock_server.control.mock_sessions.registry import HEADER
from mock_server.http.cors import varying_origin
from mock_server.http.header_names import header_names
from mock_server.http.middleware import LastResort, chain

# A request carrying any of these may meet a control layer: Prefer (faults' delay, steering), a
# session (its header, or its cookie: any Cookie), an Origin (CORS).
CONTROL_HEADERS = frozenset({b"prefer", HEADER.lower().encode(), b"cookie", b"origin"})
WHOLE = "mock.bypass.whole"  # the scope key `takes` sets on a request that needs the control layers


class Bypass:
    """ASGI middleware around the control layers (`control`, outermost first), with the way past them."""

    def __init__(
        self,
        app: ASGIApp,
        control: list[Middleware],
        rules: FaultRules,
        journal: Journal,
        as_sent: Callable[[Scope], bool],
        observer: Callable[[Scope, int | None, float], None] | None = None,
    ) -> None:
        self.whole = chain(control, app)
        self.plain = LastResort(RequestJournal(app, journal, ADMIN_PREFIX, done=observer))  # from the app's entry
        self.watched = LastResort(RequestJournal(app, journal, ADMIN_PREFIX))  # in the stack, inside the observer
        self.rules = rules
        self.as_sent = as_sent  # RawPath would leave the request as it is (`addressing.left_as_sent`)

    def takes(self, scope: Scope) -> bool:
        """Whether the request needs no control layer (see the module); one that needs them is marked
        so (`WHOLE`), and this layer sends it the whole way without asking again."""
        if (
            scope["type"] == "http"
            and not scope["path"].startswith(ADMIN_PREFIX)
            and CONTROL_HEADERS.isdisjoint(header_names(scope))
            and self.as_sent(scope)
            and self.rules.passes(scope)
        ):
            return True
        scope[WHOLE] = True
        return False

    async def serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The way past the control layers and the observer layer, for a request that needs none of
        the control layers, from the app's entry."""
        await self.plain(scope, receive, varying_origin(send))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if WHOLE not in scope and self.takes(scope):
            await self.watched(scope, receive, varying_origin(send))
        else:
            await self.whole(scope, receive, send)
