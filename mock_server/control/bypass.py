"""The hot path as a budget: a request that asks for no control feature pays for none of them.

Faults, the journal, the admin guard, CORS, the session scope, the raw path and steering only
pass on a request that needs none of them. Yet each is one more ASGI layer, and together they cost
a plain request a share of its time (benchmarks/benchmark-history.md, "The hot path as a budget").
So `Bypass` holds those layers and decides once per request, in `takes`, whether a request needs
any of them. It decides from the one scan of header names that the layers share.

A request takes the bypass when no fault rule could meet it and it is outside the admin API. It
must also send none of `Prefer`, `X-Mock-Session`, `Cookie` and `Origin`, and `RawPath` must leave
its path as sent. The fault rules are read per request, because the admin API changes them
at run time (`FaultRules.passes`). Such a request goes straight to the layer after the control
layers, through a `LastResort` and a journal layer of its own. It still gets the `Vary: Origin`
that `http.cors.CORS` adds. Any other request goes through the control layers, unchanged. With
`--proxy` there is no bypass, because the proxy must see every request
(`mock_server.stack.with_bypass`).

Connexion's entry and its error middleware sit outside this layer, and they do nothing for such a
request either. Passing them cost a GET an eighth of its time (benchmarks/benchmark-history.md,
"The declarative stack and the bypass"). So once Connexion has built this layer, the app's entry
(`app.MockApp`) asks `takes` itself and serves a request the bypass takes with `serve`. A request
that it does not take is marked, so this layer sends it the whole way without asking again.

A request served from the app's entry also skips the observer layer (control/observe.py). So the
journal on that way tells the observer of it (`observer`). A request that the bypass takes inside
the stack has already passed the observer.
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

# A request carrying any of these headers may need a control layer. Prefer asks for a fault's delay
# or for steering. A session comes in its header or in a cookie, so any Cookie counts. An Origin asks
# for CORS.
CONTROL_HEADERS = frozenset({b"prefer", HEADER.lower().encode(), b"cookie", b"origin"})
WHOLE = "mock.bypass.whole"  # The scope key `takes` sets on a request that needs the control layers.


class Bypass:
    """ASGI middleware around the control layers, with a way past them for a request that needs none.

    `control` lists the layers outermost first."""

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
        self.plain = LastResort(RequestJournal(app, journal, ADMIN_PREFIX, done=observer))  # For the app's entry.
        self.watched = LastResort(RequestJournal(app, journal, ADMIN_PREFIX))  # In the stack, inside the observer.
        self.rules = rules
        self.as_sent = as_sent  # Whether RawPath would leave the request as sent (`addressing.left_as_sent`).

    def takes(self, scope: Scope) -> bool:
        """Whether the request needs no control layer.

        A request that needs one is marked (`WHOLE`), so this layer sends it the whole way without
        asking again."""
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
        """Serve a request that needs no control layer from the app's entry, past the observer too."""
        await self.plain(scope, receive, varying_origin(send))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if WHOLE not in scope and self.takes(scope):
            await self.watched(scope, receive, varying_origin(send))
        else:
            await self.whole(scope, receive, send)
