"""`GET /__mock__/metrics`, the Prometheus text exposition, behind the admin guard.

The counters and histograms are `ops.instruments` and the requests' `ops.tally`, every worker's
under `--workers N`. The tally is copied on the event loop, where it changes. The figures of the
shared state, live test sessions and journal entries, are read when scraped, by `StateFigures`. They
come from this replica's view of it, which is the same in every replica of one Redis state.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector
from starlette.types import ASGIApp, Receive, Scope, Send

from mock_server.control.journal.base import Journal
from mock_server.control.mock_sessions.registry import Sessions
from mock_server.http.middleware import send_problem, send_whole
from mock_server.ops.instruments import exposition
from mock_server.ops.tally import TALLY
from mock_server.state.store import StateUnavailable

PATH = "/__mock__/metrics"


class StateFigures(Collector):
    """Gauges read at scrape time. A figure Redis cannot give now is left out, and counted there."""

    def __init__(self, sessions: Sessions, journal: Journal) -> None:
        self.sessions = sessions
        self.journal = journal

    def describe(self) -> Iterator[GaugeMetricFamily]:
        yield from self.families()

    def families(self) -> tuple[GaugeMetricFamily, GaugeMetricFamily]:
        return (
            GaugeMetricFamily("shop_mock_sessions", "Test sessions (X-Mock-Session) alive now."),
            GaugeMetricFamily("shop_mock_journal_entries", "Exchanges the request journal holds now."),
        )

    def collect(self) -> Iterator[GaugeMetricFamily]:
        sessions, journal = self.families()
        for family, count in ((sessions, self._sessions), (journal, self._journal)):
            try:
                family.add_metric([], count())
            except StateUnavailable:
                continue
            yield family

    def _sessions(self) -> int:
        return len(self.sessions.sessions())

    def _journal(self) -> int:
        return len(self.journal.entries())


class MetricsRoute:
    """ASGI middleware inside the admin guard answering `PATH`. It is a 404 with `--no-metrics`."""

    def __init__(self, app: ASGIApp, sessions: Sessions, journal: Journal, enabled: bool) -> None:
        self.app = app
        self.enabled = enabled
        self.local = CollectorRegistry()
        self.local.register(StateFigures(sessions, journal))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("path") != PATH:
            await self.app(scope, receive, send)
        elif not self.enabled:
            await send_problem(send, 404, "The metrics are off (--no-metrics).")
        elif scope["method"] not in ("GET", "HEAD"):
            await send_problem(send, 405, "The metrics are read with GET.", [("allow", "GET, HEAD")])
        else:  # The figures may wait for Redis, and every worker's files are read, so not on the event loop.
            body = await asyncio.to_thread(exposition, self.local, TALLY.snapshot())
            await send_whole(send, 200, body, CONTENT_TYPE_LATEST, [("cache-control", "no-store")])
