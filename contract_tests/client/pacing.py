"""How many of the suite's requests may be in flight at once, adapted to what the target answers.

A run on a slow network overlaps its requests (`--workers`). A small server must not be overrun by
them, or the suite would report the slowness it caused itself. So every request of both clients
passes through one `Pacer`.

- At most `limit` requests are in flight. The limit starts at the ceiling (`--workers`). It is halved
  when the target says it is overloaded (429 or 503), or when its answers take much longer than the
  fastest seen from the same origin. It grows back by one after `limit` answers in a row that were neither.
- The fastest answer is kept per origin (scheme, host and port), because the servers a run talks to are
  not equally far. A token endpoint next to the suite answered in 5 ms. The API, across a network, took
  100-300 ms. Judged against the token's 5 ms, every answer of the API was slow. So the limit stayed at
  one, and a run of 5 minutes took 17.
- Slow answers halve it once per round, as TCP does. The requests already in flight when it was
  halved were sent under the old limit, so their slow answers do not halve it again. A burst of them
  once took 16 to 1 at once, and the run crawled back one request at a time.
- An answer 429 or 503 is not judged but waited for. Every request waits out its `Retry-After`,
  bounded, and is then sent again, at most `RETRIES` times. The header holds seconds or an HTTP date,
  and a default applies when it is absent. A target that keeps refusing gets its last answer judged,
  as sent.

The latency seen also sizes `--workers auto` (`suggested_workers`). It puts enough requests in flight
to cover the network's wait, and one when the target answers at once.

A time budget (`--max-time`, `stop_at`) ends here too. No request starts past it (`BudgetSpent`), not
even one sent past the limit (`at_once`, the capacity probe's batch). A request in flight is given no
more than the budget's time `left`. One that fails once the budget is spent raises `BudgetSpent` too,
so that a cut request is not reported as the target's slowness. A run thus ends at its budget. `stop`
ends it now, on Ctrl-C or SIGTERM (run/interrupts.py).
"""

from __future__ import annotations

import email.utils
import math
import statistics
import threading
import time
import urllib.parse
from collections.abc import Callable
from typing import TypeVar

R = TypeVar("R")

OVERLOADED = frozenset({429, 503})
RETRIES = 3
"""Times a request refused as overloaded is sent again before its answer is judged as it is."""
REFUSING = 3
"""Requests in a row answered 429/503 after every retry. After these the target is down, not busy, and
gets no more retries."""
MAX_WAIT = 30.0
"""The longest a `Retry-After` is honoured, in seconds. A longer one is waited this long."""
DEFAULT_WAIT = 1.0
"""Seconds waited after a 429 or 503 without `Retry-After`, doubled at each retry."""
SLOW_FACTOR = 4.0
"""An answer this many times slower than the fastest seen, and 50 ms more, means the target is queueing."""
MAX_AUTO_WORKERS = 16
SUITE_SECONDS_PER_REQUEST = 0.01
"""The suite's own time per request, generating and judging. One worker covers a latency of this much."""
NEAR = 0.02
"""A median latency below this is a target on this machine or next to it, so it gets one worker.

The suite and the target then share the processors, and more requests in flight only queue."""


def origin_of(url: str) -> str:
    """The scheme, host and port of `url`: the server whose answers are judged against each other.

    It never raises: a URL can come from a target's answer (a `next` link), and one `urlsplit` cannot
    read (an unclosed "[" of an IPv6 host) is an origin of its own."""
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return url
    return f"{parts.scheme}://{parts.netloc}".lower()


class BudgetSpent(Exception):
    """The run's time budget (`--max-time`) is spent, so no request starts any more."""


def retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait by a `Retry-After` value, bounded by MAX_WAIT.

    None when it is absent or unreadable, so the caller's default applies. It never raises, because what
    a target sends is not trusted to parse.

    RFC 9110 (10.2.3) allows delay-seconds, ASCII digits only, or an HTTP date. `str.isdigit` alone also
    accepts "²" (superscript two), which `int` refuses. It also accepts fullwidth or Arabic-Indic digits,
    which `int` reads as numbers no HTTP peer meant. All are unreadable here. So are a sign, a fraction
    and a date `email.utils` cannot place in time."""
    if value is None:
        return None
    text = value.strip()[:64]
    if text.isascii() and text.isdigit():
        return min(float(text[:6]), MAX_WAIT)
    try:
        when = email.utils.parsedate_to_datetime(text).timestamp()
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    return max(0.0, min(when - (time.time() if now is None else now), MAX_WAIT))


class Pacer:
    """One run's gate on its requests. It holds a concurrency limit that adapts, and the waits the target asks for."""

    def __init__(
        self, ceiling: int = 1, sleep: Callable[[float], None] = time.sleep, stop_at: float | None = None
    ) -> None:
        self.ceiling = max(1, ceiling)
        self.stop_at = stop_at
        """`time.monotonic()` past which no request starts. None means no budget."""
        self._shrunk_at = float("-inf")
        self.stopped_by: str | None = None
        """Why the run was stopped before its budget (`stop`), if it was."""
        self.limit = self.ceiling
        self._sleep = sleep
        self._lock = threading.Condition()
        self._in_flight = 0
        self._refusing = 0
        self._calm = 0
        self._resume_at = 0.0
        self._fastest: dict[str, float] = {}
        """The fastest answer seen from each origin: the baseline its other answers are judged slow against."""
        self._latencies: list[float] = []
        self.waits = 0
        """Answers 429/503 the run waited out instead of judging them."""
        self.lowest_limit = self.ceiling

    def set_ceiling(self, ceiling: int) -> None:
        """The most requests in flight from now on. `--workers auto` decides it once the latency is known."""
        with self._lock:
            self.ceiling = max(1, ceiling)
            self.limit = min(self.limit, self.ceiling) if self._latencies else self.ceiling
            self.lowest_limit = min(self.lowest_limit, self.limit)
            self._lock.notify_all()

    def stop(self, reason: str) -> None:
        """End the budget now. No request starts from here on, and `BudgetSpent` says `reason`."""
        with self._lock:
            self.stopped_by = reason
            self.stop_at = time.monotonic()
            self._lock.notify_all()

    def send(
        self, send: Callable[[], R], status: Callable[[R], int], wait_header: Callable[[R], str | None], origin: str
    ) -> R:
        """`send()` to `origin` (`origin_of`) within the limit. An overloaded answer is waited out and sent
        again, at most RETRIES times.

        There are no retries while the target refused every retry of the last REFUSING requests, because
        it is then down, not busy."""
        retries = 0 if self._refusing >= REFUSING else RETRIES
        for attempt in range(retries + 1):
            self._acquire()
            started = time.monotonic()
            try:
                response = self._within_budget(send)
            finally:
                self._release()
            code = status(response)
            if code not in OVERLOADED or attempt == retries:
                self._answered(time.monotonic() - started, code in OVERLOADED, origin, started)
                return response
            asked = retry_after(wait_header(response))
            self._overloaded(asked if asked is not None else min(DEFAULT_WAIT * 2**attempt, MAX_WAIT))
        raise AssertionError("unreachable")  # pragma: no cover  (the loop returns on its last attempt)

    def at_once(self, send: Callable[[], R]) -> R:
        """`send()` now, past the limit and the waits a target asked for, but within the budget like every request.

        The capacity probe's batch must go out together, and it reads a 429 as a measurement."""
        with self._lock:
            self._check_budget(time.monotonic())
        return self._within_budget(send)

    def left(self) -> float | None:
        """Seconds left of the budget, the most a request starting now may take. None means no budget."""
        stop_at = self.stop_at
        return None if stop_at is None else max(0.0, stop_at - time.monotonic())

    def suggested_workers(self) -> int:
        """Requests in flight that cover the target's median latency. It is 1 on loopback, and more far away."""
        with self._lock:
            if not self._latencies:
                return 1
            latency = statistics.median(self._latencies[-200:])
        if latency < NEAR:
            return 1
        return max(1, min(MAX_AUTO_WORKERS, math.ceil(latency / SUITE_SECONDS_PER_REQUEST)))

    def median_latency(self) -> float | None:
        with self._lock:
            return statistics.median(self._latencies[-200:]) if self._latencies else None

    @property
    def spent(self) -> bool:
        """Whether the budget is spent."""
        return self.stop_at is not None and time.monotonic() >= self.stop_at

    def _check_budget(self, now: float) -> None:
        if self.stop_at is not None and now >= self.stop_at:
            raise BudgetSpent(self.stopped_by or "the time budget (--max-time) is spent")

    def _within_budget(self, send: Callable[[], R]) -> R:
        """`send()`, whose failure once the budget is spent is `BudgetSpent`.

        The request was then cut at the budget, or failed as the run ended. That is not the target's
        answer to judge."""
        try:
            return send()
        except Exception as exc:
            if self.spent:
                raise BudgetSpent(self.stopped_by or "the time budget (--max-time) is spent") from exc
            raise

    def _acquire(self) -> None:
        with self._lock:
            while True:
                now = time.monotonic()
                self._check_budget(now)
                pause = self._resume_at - now
                if self.stop_at is not None:
                    pause = min(pause, self.stop_at - now)
                if pause > 0:
                    self._lock.wait(pause)
                elif self._in_flight < self.limit:
                    self._in_flight += 1
                    return
                else:
                    self._lock.wait(None if self.stop_at is None else max(0.0, self.stop_at - now))

    def _release(self) -> None:
        with self._lock:
            self._in_flight -= 1
            self._lock.notify_all()

    def _answered(self, seconds: float, refused: bool, origin: str, started: float | None = None) -> None:
        """An answer from `origin` that took `seconds` to a request sent at `started` (`time.monotonic()`)."""
        with self._lock:
            self._refusing = self._refusing + 1 if refused else 0
            self._latencies.append(seconds)
            del self._latencies[:-1000]
            fastest = self._fastest[origin] = min(self._fastest.get(origin, seconds), seconds)
            if seconds > fastest * SLOW_FACTOR + 0.05 and self.limit > 1:
                if started is None or started >= self._shrunk_at:  # Otherwise it was sent before the last halving.
                    self._shrink()
                return
            self._calm += 1
            if self._calm >= self.limit and self.limit < self.ceiling:
                self.limit += 1
                self._calm = 0
                self._lock.notify_all()

    def _overloaded(self, wait: float) -> None:
        with self._lock:
            self.waits += 1
            self._shrink()
            self._resume_at = max(self._resume_at, time.monotonic() + wait)
            self._lock.notify_all()
        self._sleep(0)  # Let the others see the pause. The wait itself happens in _acquire.

    def _shrink(self) -> None:
        self._shrunk_at = time.monotonic()
        self.limit = max(1, self.limit // 2)
        self.lowest_limit = min(self.lowest_limit, self.limit)
        self._calm = 0
