"""The outermost layer: each request counted and timed by operation and status (`ops.instruments`)
and, with `--log-format json`, logged as one JSON object.

It stays outside the bypass (mock_server/stack.py), so that a plain request is counted as any
other. Its cost on a request is two clock reads, a cached look-up of the operation and a tally
(`ops.instruments.Tally`; benchmarks/metrics_cost.py measures it). The request's line names what an
operator needs and no credential: the path with its query masked as the journal masks it, cut to a
bound; the session; the replica; the fault a rule or `Prefer: delay` applied.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mock_server.api.security import REALM_PATH
from mock_server.control.admin import PREFIX as ADMIN_PREFIX
from mock_server.control.faults.rules import routing_path
from mock_server.control.journal.base import FAULT
from mock_server.control.mock_sessions.registry import SessionError, session_name
from mock_server.http import masking
from mock_server.ops.instruments import TALLY
from mock_server.spec.operations import OperationIndex
from mock_server.spec.quoting import cut

log = logging.getLogger("shop_mock.requests")
MAX_CACHED = 4096  # (method, path) pairs whose operation is remembered; the cache starts afresh past it
NO_ANSWER = "none"  # the status label of a request whose connection closed before any answer


class Observe:
    """ASGI middleware: counts, times and (optionally) logs each HTTP request."""

    def __init__(self, app: ASGIApp, index: OperationIndex, count: bool, log_requests: bool, replica: str) -> None:
        self.app = app
        self.index = index
        self.count = count
        self.log_requests = log_requests
        self.replica = replica
        self.operations: dict[tuple[str, str], str] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        await self.watch(scope, receive, send, self.app)

    async def watch(self, scope: Scope, receive: Receive, send: Send, app: ASGIApp) -> None:
        """Serve an HTTP request by `app`, counted and timed. The app's entry sends a request the
        bypass takes here with the bypass as `app`, past the layers between them."""
        started = time.perf_counter()
        status = NO_ANSWER

        async def watching(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = str(message["status"])
            await send(message)

        try:
            await app(scope, receive, watching)
        finally:
            elapsed = time.perf_counter() - started
            operation = self.operation(scope)
            if self.count:
                TALLY.add(operation, status, elapsed)
            if self.log_requests:
                log.info("request", extra={"event": self.event(scope, operation, status, elapsed)})

    def operation(self, scope: Scope) -> str:
        """The request's operationId, else `admin`, `realm` or `other`; remembered per method and path."""
        key = (scope["method"], scope["path"])
        known = self.operations.get(key)
        if known is not None:
            return known
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
        self.operations[key] = name
        return name

    def event(self, scope: Scope, operation: str, status: str, elapsed: float) -> dict[str, Any]:
        """The fields of the request's log line: nothing a credential could be in, unmasked."""
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
            "status": None if status == NO_ANSWER else int(status),
            "duration_ms": round(elapsed * 1000, 3),
            "session": session,
            "replica": self.replica,
            "fault": None if fault is None else fault["fault"],
        }
