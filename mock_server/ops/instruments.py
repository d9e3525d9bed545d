"""The mock's Prometheus instruments, one set per process, and their exposition.

Under `--workers N` each worker is a process of its own: `mock_server/replicas.py` points
`PROMETHEUS_MULTIPROC_DIR` at a fresh directory before the workers start, prometheus_client then
keeps every value in a file there (its multiprocess mode), and a scrape of any worker adds up all
of them (`exposition`). Each replica (a process or a pod of its own) is scraped on its own.

Label values are bounded: an operation is an operationId or one of `OTHER_OPERATIONS`, a status a
three-digit code, a realm error one of Keycloak's names, a fault rule as the admin API installed it.
"""

from __future__ import annotations

import asyncio
import bisect
import os

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.multiprocess import MultiProcessCollector

MULTIPROCESS_DIRECTORY = "PROMETHEUS_MULTIPROC_DIR"
OTHER_OPERATIONS = ("admin", "realm", "other")  # a request that names no operation of the spec

DURATION_BOUNDS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
FLUSH_S = 1.0  # a request is in the instruments (and other workers' scrapes) at most this long after it ends

REQUESTS = Counter("shop_mock_requests", "Requests answered, by operation and status.", ["operation", "status"])
DURATION = Histogram(
    "shop_mock_request_duration_seconds",
    "Time from a request's arrival to its answer's last byte, by operation.",
    ["operation"],
    buckets=DURATION_BOUNDS,
)
FAULTS = Counter("shop_mock_faults_injected", "Faults injected, by rule (or Prefer: delay).", ["rule", "fault"])
LOGINS = Counter("shop_mock_realm_logins", "Tokens the realm issued, by grant type.", ["grant"])
TOKEN_ERRORS = Counter("shop_mock_realm_token_errors", "Token requests the realm refused, by error.", ["error"])
REJECTED_TOKENS = Counter(
    "shop_mock_rejected_tokens", "Access tokens presented and found invalid or expired (the API, userinfo)."
)
STREAMS = Gauge(
    "shop_mock_dashboard_streams", "Dashboard pages streaming the journal now.", multiprocess_mode="livesum"
)
REDIS_ERRORS = Counter("shop_mock_redis_errors", "Calls of the shared state that Redis failed, by call.", ["call"])
REDIS_LATENCY = Histogram(
    "shop_mock_redis_call_duration_seconds",
    "Time of each call of the shared state (Redis, or its local copy while Redis reports no change), by call.",
    ["call"],
    buckets=(0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1.0, 5.0),
)


def multiprocess() -> bool:
    """Whether this process keeps its values in the shared directory (`--workers N`)."""
    return bool(os.environ.get(MULTIPROCESS_DIRECTORY))


def exposition(local: CollectorRegistry) -> bytes:
    """The text exposition of every worker's instruments, and of `local` (figures read at scrape time)."""
    TALLY.flush()
    if multiprocess():
        registry = CollectorRegistry()
        MultiProcessCollector(registry)  # type: ignore[no-untyped-call]  # prometheus_client leaves it unannotated
    else:
        registry = REGISTRY
    return generate_latest(registry) + generate_latest(local)


class Tally:
    """The requests of this process, counted in plain Python and added to the instruments in one go.

    An instrument's `inc` and `observe` take a lock each (and, under `--workers`, write to a file):
    about 2.5 µs a request for a counter and a histogram, a tenth of a plain request's time in the
    mock. A tally costs a dict look-up and three additions. It is added to the instruments when
    this process serves a scrape, and `FLUSH_S` after its first request since the last time, so
    another worker's scrape sees it within that.
    """

    def __init__(self) -> None:
        self.rows: dict[tuple[str, str], list[float]] = {}  # (operation, status) -> count, sum, buckets
        self.scheduled = False

    def add(self, operation: str, status: str, elapsed: float) -> None:
        row = self.rows.get((operation, status))
        if row is None:
            row = self.rows[(operation, status)] = [0.0] * (3 + len(DURATION_BOUNDS))
        row[0] += 1
        row[1] += elapsed
        row[2 + bisect.bisect_left(DURATION_BOUNDS, elapsed)] += 1  # the last one is +Inf
        if not self.scheduled:
            self.scheduled = True
            asyncio.get_running_loop().call_later(FLUSH_S, self.flush)

    def flush(self) -> None:
        """Add what was counted since the last time to the instruments.

        prometheus_client has no way to observe many values at once: the histogram's sum and
        per-bucket values (`_sum`, `_buckets`, what its `observe` increments) are increased here
        directly; tests/test_metrics.py holds the exposition to the requests sent."""
        rows, self.rows, self.scheduled = self.rows, {}, False
        for (operation, status), row in rows.items():
            REQUESTS.labels(operation, status).inc(row[0])
            histogram = DURATION.labels(operation)
            histogram._sum.inc(row[1])
            for bucket, count in zip(histogram._buckets, row[2:], strict=True):
                if count:
                    bucket.inc(count)


TALLY = Tally()
