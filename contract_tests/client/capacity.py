"""How many requests a target serves at once: what tells a far target from a busy one.

Latency alone cannot: a service 200 ms away answers eight requests sent together as fast as one, while
a small server (gunicorn with two sync workers, a few tens of milliseconds a request) queues them, and
overlapping the suite's requests there only makes its answers slow, which the suite would then report
as the target's. So before `--workers auto` is sized, one safe request is timed alone (ALONE times),
then PROBE copies of it are sent at once, twice (the first batch opens the connections). A server
serving `c` at a time answers the batch's requests after 1, 1, ..., 2, 2, ... up to PROBE/c service
times: their mean is (PROBE/c + 1)/2 of one request alone, which gives `c`; on a far target the mean
stays about one request's time, and `c` is PROBE.
"""

from __future__ import annotations

import math
import statistics
import threading
import time
from collections.abc import Callable

PROBE = 8
"""Requests sent at once to measure the target's capacity: past what `--workers auto` would choose for
a target that queues, and few enough for any server to take."""
ALONE = 3
"""Times the request is sent alone first: its median is the time one request takes."""
PARALLEL = 0.6
"""A capacity of this part of PROBE or more: the target served the whole batch side by side."""
MARGIN = 0.25
"""Part of a request counted in as measurement noise: 1.8 served at once is taken as 2, 1.6 as 1."""


def timed(send: Callable[[], object]) -> float:
    """Seconds `send()` took."""
    started = time.monotonic()
    send()
    return time.monotonic() - started


def together(send: Callable[[], object], probe: int) -> list[float]:
    """Seconds each of `probe` calls of `send` took, started at once on threads; an exception is raised here."""
    barrier = threading.Barrier(probe)
    took: list[float] = []
    failures: list[BaseException] = []

    def one() -> None:
        barrier.wait()
        try:
            took.append(timed(send))
        except BaseException as exc:  # raised again in the caller's thread below
            failures.append(exc)

    threads = [threading.Thread(target=one, name=f"shop-contract-probe-{n}", daemon=True) for n in range(probe)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise failures[0]
    return took


def parallel_capacity(send: Callable[[], object], probe: int = PROBE) -> float:
    """About how many requests the target serves at once (at most `probe`): `send` (one safe request)
    timed alone, then `probe` times at once on threads, twice: the first batch opens the connections
    (a new TLS connection far away costs round trips one request alone does not pay), the second is
    measured. An exception of `send` is raised here."""
    alone = max(statistics.median(timed(send) for _ in range(ALONE)), 1e-6)
    together(send, probe)
    slower = max(1.0, statistics.mean(together(send, probe)) / alone)
    return min(float(probe), probe / (2 * slower - 1))


def bounded_workers(suggested: int, capacity: float, probe: int = PROBE) -> int:
    """`suggested` (what the latency asks for), unless the target queued the probe: then no more than it
    serves at once."""
    if capacity >= probe * PARALLEL:
        return suggested
    return max(1, min(suggested, math.floor(capacity + MARGIN)))
