"""How many requests a target serves at once: what tells a far target from a busy or a throttled one.

Latency alone cannot tell them apart. A service 200 ms away answers eight requests sent together as fast
as one. A small server (gunicorn with two sync workers, a few tens of milliseconds a request) queues
them. Overlapping the suite's requests there only makes its answers slow, and the suite would then
report that slowness as the target's.

So before `--workers auto` is sized, PROBE copies of one safe request are sent at once. They open the
connections and wake every worker, since a worker's first request is slower than the rest. Then, ROUNDS
times, the request is timed alone (ALONE times) and PROBE copies are sent at once again. A server
serving `c` at a time answers a batch's requests after 1, 1, ..., 2, 2, ... up to PROBE/c service
times. Their mean is (PROBE/c + 1)/2 of one request alone, which gives `c`. On a far target the mean
stays about one request's time, and `c` is PROBE.

The rounds' times are pooled: the median of every request alone, the mean of every batch's answers. On a
shared machine another process's burst of load slows whatever runs during it. One request timed alone
in such a burst made gunicorn with two workers seem to serve three or four side by side (the DRF
backend, on a loaded CI runner). Pooled, a burst moves the median of six by little, and the mean of
twenty-four by a third of what it moved one batch.

A throttled target (a DRF throttle, nginx `limit_conn`) says so instead of queueing: it answers 429 or
503 past what it takes. Such an answer is a measurement, not a failure: the requests of the batch it
did answer bound what it serves at once, and only their times are compared with the request alone.
"""

from __future__ import annotations

import math
import statistics
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from contract_tests.client.pacing import OVERLOADED

PROBE = 8
"""Requests sent at once to measure the target's capacity: past what `--workers auto` would choose for
a target that queues, and few enough for any server to take."""
ROUNDS = 3
"""Rounds of the measurement: the request alone, then a batch."""
ALONE = 2
"""Times the request is sent alone in each round: the median of all of them is the time one request takes."""
PARALLEL = 0.6
"""A capacity of this part of the answered requests or more: the target served them side by side."""
MARGIN = 0.25
"""Part of a request counted in as measurement noise: 1.8 served at once is taken as 2, 1.6 as 1."""

Send = Callable[[], int]
"""One safe request, sent: its status code."""


@dataclass(frozen=True)
class Capacity:
    """What the probe saw of a batch sent at once."""

    sent: int
    """Requests sent at once (1: the request alone was refused, and no batch was sent)."""
    answered: int
    """Of them, answered with anything but 429 or 503 (the fewest any batch answered)."""
    at_once: float
    """About how many the target served side by side, from the answered requests' times (at most `answered`)."""
    refused_with: int | None = None
    """The status the target refused the others with (429 or 503), if it refused any."""

    @property
    def side_by_side(self) -> bool:
        """The answered requests took about as long as one alone: the target queued none of them."""
        return self.answered > 0 and self.at_once >= self.answered * PARALLEL

    def bound(self) -> int | None:
        """The most requests in flight the target takes (None: it served the whole batch side by side)."""
        if self.side_by_side:
            return None if self.refused_with is None else self.answered
        return max(1, math.floor(self.at_once + MARGIN))

    def describe(self) -> str:
        """What the probe saw, for the run's progress."""
        served = f"about {self.at_once:.1f} served at once"
        if self.refused_with is None:
            return served
        if self.sent == 1:
            return f"the target refused a request sent alone with {self.refused_with}"
        refused = self.sent - self.answered
        return f"the target refused {refused} of {self.sent} sent at once with {self.refused_with}, {served}"


def timed(send: Send) -> tuple[float, int]:
    """Seconds `send()` took, and the status it answered."""
    started = time.monotonic()
    status = send()
    return time.monotonic() - started, status


def together(send: Send, probe: int) -> list[tuple[float, int]]:
    """Seconds each of `probe` calls of `send` took and its status, started at once on threads; an
    exception is raised here."""
    barrier = threading.Barrier(probe)
    took: list[tuple[float, int]] = []
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


def parallel_capacity(send: Send, probe: int = PROBE) -> Capacity:
    """What the target serves at once, at most `probe`.

    `send` (one safe request) goes `probe` times at once on threads, then ROUNDS times alone and `probe`
    times at once again, measured. The first batch opens the connections: a new TLS connection far away
    costs round trips that one request alone does not pay. It also warms the target's workers. A cold
    worker timed alone makes one request seem long, and a queueing target seem to serve the batch side
    by side. An answer 429 or 503 is a refusal, and counted. An exception of `send` is raised here."""
    together(send, probe)
    alone: list[float] = []
    answered: list[float] = []
    fewest = probe
    refused_with: int | None = None
    for _ in range(ROUNDS):
        round_alone = [timed(send) for _ in range(ALONE)]
        refused = [status for _, status in round_alone if status in OVERLOADED]
        if refused:  # it cannot take even one at a time: nothing to time a batch against
            return Capacity(1, 0, 0.0, refused[0])
        alone += [seconds for seconds, _ in round_alone]
        batch = together(send, probe)
        served = [seconds for seconds, status in batch if status not in OVERLOADED]
        refused_with = next((status for _, status in batch if status in OVERLOADED), refused_with)
        answered += served
        fewest = min(fewest, len(served))
    if fewest == 0:
        return Capacity(probe, 0, 0.0, refused_with)
    one = max(statistics.median(alone), 1e-6)
    slower = max(1.0, statistics.mean(answered) / one)
    return Capacity(probe, fewest, min(float(fewest), fewest / (2 * slower - 1)), refused_with)


def bounded_workers(suggested: int, capacity: Capacity) -> int:
    """`suggested` (what the latency asks for), unless the target queued or refused some of the probe:
    then no more than it serves at once."""
    bound = capacity.bound()
    return suggested if bound is None else max(1, min(suggested, bound))
