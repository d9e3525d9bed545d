"""Liveness and readiness for an orchestrator, at `/__mock__/livez` and `/__mock__/readyz`.

A kubelet's probe sends no token, and its `Host` is the pod's address. So these two routes are
answered before the admin guard, with `--no-admin` too. They reveal nothing but `up` and `ready`,
or `not ready` with a 503. They give no counts, no names and no version. Ready means the data is
loaded, since the app is built only once it is. With a shared state it also means Redis answers a
PING within its bound. They live under `/__mock__/`, the mock's own prefix, where no path of a spec
is served, and the journal does not record them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from starlette.types import ASGIApp, Receive, Scope, Send

from mock_server.http.middleware import send_problem, send_whole

LIVE = "/__mock__/livez"
READY = "/__mock__/readyz"
TEXT = "text/plain; charset=utf-8"
NO_STORE = [("cache-control", "no-store")]


class Probes:
    """ASGI middleware answering the two probe routes; every other request passes on."""

    def __init__(self, app: ASGIApp, ready: Callable[[], bool]) -> None:
        self.app = app
        self.ready = ready

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path")
        if scope["type"] != "http" or (path != LIVE and path != READY):
            await self.app(scope, receive, send)
            return
        if scope["method"] not in ("GET", "HEAD"):
            await send_problem(send, 405, "A probe is read with GET or HEAD.", [("allow", "GET, HEAD")])
        elif path == LIVE:
            await send_whole(send, 200, b"up\n", TEXT, NO_STORE)
        elif await asyncio.to_thread(self.ready):  # A PING to Redis waits on the network, so not on the event loop.
            await send_whole(send, 200, b"ready\n", TEXT, NO_STORE)
        else:
            await send_whole(send, 503, b"not ready\n", TEXT, NO_STORE)
