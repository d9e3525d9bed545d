"""The mock's Prometheus instruments, one set per process, and their exposition.

Under `--workers N` each worker is a process of its own. `mock_server/replicas.py` points
`PROMETHEUS_MULTIPROC_DIR` at a fresh directory before the workers start. prometheus_client then keeps
every value in a file there (its multiprocess mode). A scrape of any worker adds up all of them
(`exposition`). Each replica, a process or a pod of its own, is scraped on its own.

The requests and their durations are counted on every request, so they are not instruments. They are
a `Tally` in plain Python (`mock_server/ops/tally.py`), exposed at scrape time through a custom
collector, as prometheus_client documents for figures kept elsewhere. The reason is that an
instrument's `inc` and `observe` take a lock each, and cost a plain request a tenth of its time
(benchmarks/benchmark-history.md, "The cost of the metrics").

Label values are bounded:

- An operation is an operationId, else `admin`, `realm` or `other` (`Observer.learn` in
  control/observe.py).
- A status is a three-digit code.
- A realm error is one of Keycloak's names.
- A fault rule is named as the admin API installed it.
"""

from __future__ import annotations

import os
from pathlib import Path

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.multiprocess import MultiProcessCollector, mark_process_dead

from mock_server.ops.tally import RequestFigures, Rows, multiprocess_directory, other_workers

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


def exposition(local: CollectorRegistry, requests: Rows) -> bytes:
    """The text exposition of every worker's instruments and requests, and of `local`.

    `requests` is this process's tally, a `Tally.snapshot`. `local` holds figures read at scrape time."""
    directory = multiprocess_directory()
    if directory:
        forget_dead_workers(directory)
        registry = CollectorRegistry()
        MultiProcessCollector(registry)  # type: ignore[no-untyped-call]  # prometheus_client leaves it unannotated
        requests = other_workers(directory, requests)
    else:
        registry = REGISTRY
    figures = CollectorRegistry()
    figures.register(RequestFigures(requests))
    return generate_latest(registry) + generate_latest(figures) + generate_latest(local)


def forget_dead_workers(directory: str) -> None:
    """Drop the live gauges (the dashboard's streams) of every worker that is no longer running.

    A worker killed by SIGKILL, the OOM killer or a crash cannot count its streams down. uvicorn's
    supervisor replaces it, but does not tell prometheus_client (`mark_process_dead`). So its file
    would keep its streams in the sum for good. A worker's counters stay, as a counter never goes
    down. When another process takes a dead worker's process id, the file stays until that one ends.
    """
    for path in Path(directory).glob("gauge_live*_*.db"):
        pid = int(path.stem.rsplit("_", 1)[1])
        try:
            os.kill(pid, 0)  # Signal 0 sends nothing. It only tells whether the process exists.
        except ProcessLookupError:
            mark_process_dead(pid, directory)  # type: ignore[no-untyped-call]  # prometheus_client leaves it unannotated
        except PermissionError:
            continue  # A process of another user, so it is alive.
