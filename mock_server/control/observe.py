"""What each request is watched for. It is counted and timed by operation and status (`ops.tally`).
With `--log-format json`, it is also logged as one JSON object (`Observer`).

Two ways reach the observer, and each request takes one:

- The outermost layer, `Observe`, watches a request that goes through Connexion's stack. It wraps
  `send` to learn the status, and reads the clock around the rest.
- A request the bypass takes from the app's entry (control/bypass.py) passes no such layer. The
  bypass's journal layer taps `send` and reads the clock for the journal anyway. So it tells the
  observer when the request is done (`journal.middleware.RequestJournal`'s `done`). The plain request
  then pays for no second wrapper and no layer more (benchmarks/metrics_cost.py).

Its cost on a request is then a cached look-up of the operation and a tally. The tally is a dict
look-up, two additions and, past the first bucket's bound, a bisection. That is rare for a mock.

The request's line names what an operator needs and no credential. It holds the path with its query
masked as the journal masks it, cut to a bound. It also holds the session, the replica, and the fault
a rule or `Prefer: delay` applied.
"""

from __future__ import annotations

import logging
import time
from bisect import bisect_left
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mock_server.api.security import REALM_PATH
from mock_server.control.admin import PREFIX as ADMIN_PREFIX
from mock_server.control.faults.rules import routing_path
from mock_server.control.journal.base import FAULT
from mock_server.control.mock_sessions.registry import SessionError, session_name
from mock_server.http import masking
from mock_server.ops.tally import DURATION_BOUNDS, FIRST_BOUND, TALLY, ByStatus, new_row
from mock_server.spec.operations import OperationIndex
from mock_server.spec.quoting import cut

log = logging.getLogger("shop_mock.requests")
MAX_CACHED = 4096  # The (method, path) pairs whose operation is remembered. Past it, the cache starts afresh.


class Observer:
    """Counts each request it is told of (`done`), and logs it when asked to."""

    def __init__(self, index: OperationIndex, count: bool, log_requests: bool, replica: str) -> None:
        self.index = index
        self.count = count
        self.log_requests = log_requests
        self.replica = replica
        self.operations: dict[tuple[str, str], tuple[str, ByStatus]] = {}  # To the operationId and its tally.

    def done(self, scope: Scope, status: int | None, elapsed: float) -> None:
        """A request answered `status` after `elapsed` seconds. A `status` of None means no answer."""
        known = self.operations.get((scope["method"], scope["path"]))
        if known is None:
            known = self.learn(scope)
        if self.count:  # The tally's row (ops/tally.py) is counted inline. One call more would cost a GET about 1 %.
            rows = known[1]
            row = rows.get(status)
            if row is None:
                row = rows[status] = new_row()
            row[0] += elapsed
            row[1 if elapsed <= FIRST_BOUND else 1 + bisect_left(DURATION_BOUNDS, elapsed)] += 1
        if self.log_requests:
            log.info("request", extra={"event": self.event(scope, known[0], status, elapsed)})

    def learn(self, scope: Scope) -> tuple[str, ByStatus]:
        """The request's operationId and its tally, remembered per method and path.

        A request of no operation is named `admin`, `realm` or `other`."""
        found = self.index.find(scope["method"], routing_path(scope))
        if found is not None:
            name = found.operation_id
        elif scope["path"].startswith(ADMIN_PREFIX):
            name = "admin"
        elif scope["path"].startswith(REALM_PATH):
            name = "realm"
        else:
            name = "other"
        if len(self.operations) >= MAX_CACHED:
            self.operations.clear()
        known = self.operations[(scope["method"], scope["path"])] = (name, TALLY.of(name))
        return known

    def event(self, scope: Scope, operation: str, status: int | None, elapsed: float) -> dict[str, Any]:
        """The fields of the request's log line. Nothing a credential could be in is left unmasked."""
        query = scope.get("query_string", b"").decode("latin-1")
        target = scope.get("raw_path", b"").decode("latin-1") or scope["path"]
        try:
            session = session_name(scope["headers"])
        except SessionError:
            session = "(invalid)"
        fault = scope.get(FAULT)
        return {
            "event": "request",
            "method": cut(scope["method"]),
            "path": cut(masking.url(f"{target}?{query}" if query else target)),
            "operation": operation,
            "status": status,
            "duration_ms": round(elapsed * 1000, 3),
            "session": session,
            "replica": self.replica,
            "fault": None if fault is None else fault["fault"],
        }


class Observe:
    """The outermost ASGI middleware. It tells the `observer` of each HTTP request through it."""

    def __init__(self, app: ASGIApp, observer: Observer) -> None:
        self.app = app
        self.observer = observer

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status: int | None = None

        async def watching(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, watching)
        finally:
            self.observer.done(scope, status, time.perf_counter() - started)
