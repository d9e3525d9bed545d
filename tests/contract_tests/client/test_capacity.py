"""`--workers auto` keeps no more requests in flight than a target serves at once: a real threaded HTTP
server on a loopback port, which serves `slots` requests at a time (the rest wait, as in a small
gunicorn's backlog) or every request side by side (as a far target, whose wait is the network's), and
may refuse past `throttle` in flight with 429 (nginx `limit_conn`)."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler

import httpx
import pytest

from contract_tests.client.capacity import PROBE, Capacity, bounded_workers, parallel_capacity
from tests.support.live import ThreadedServer, serving_stdlib

SERVICE_S = 0.3
"""Each request's time on the server: long beside the machine's noise."""
SIDE_BY_SIDE_S = 1.0
"""Each request's time on a server serving all at once. Its threads share this process's interpreter with
the probe's eight client threads, and on a loaded machine (the default run's four workers on 2 cores) a
batch's answers came back up to a quarter of a second late: against 0.3 s that read as queueing."""
SUGGESTED = 16
COLD_S = 1.0
"""What a cold worker's first request takes more."""
BURST_S = 0.6
"""What a request takes more during another process's burst of load."""


@contextlib.contextmanager
def server(slots: int | None, throttle: int | None = None, cold: int = 0, burst: range = range(0)) -> Iterator[str]:
    """A server on a free loopback port taking SERVICE_S a request, `slots` at a time (None: all at once,
    SIDE_BY_SIDE_S each), answering 429 with `Retry-After: 1` to a request that arrives while `throttle`
    are in flight; its first `cold` requests take COLD_S more (a worker's first request, as Django's), and
    the requests it serves `burst` (counted from 1) BURST_S more."""
    gate = threading.Semaphore(slots) if slots is not None else contextlib.nullcontext()
    counting = threading.Lock()
    in_flight = [0]
    served = [0]

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            with counting:
                refused = throttle is not None and in_flight[0] >= throttle
                in_flight[0] += 0 if refused else 1
            if refused:
                self.answer(429, ("Retry-After", "1"))
                return
            try:
                with gate:
                    with counting:
                        served[0] += 1
                        warming, bursting = served[0] <= cold, served[0] in burst
                    extra = (COLD_S if warming else 0) + (BURST_S if bursting else 0)
                    time.sleep((SERVICE_S if slots else SIDE_BY_SIDE_S) + extra)
            finally:
                with counting:
                    in_flight[0] -= 1
            self.answer(500 if self.path == "/fail" else 200)

        def answer(self, status: int, *headers: tuple[str, str]) -> None:
            self.send_response(status)
            for name, value in [*headers, ("Content-Length", "2")]:
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(b"{}")

        def log_message(self, format: str, *args: object) -> None:
            """Quiet."""

    with serving_stdlib(ThreadedServer(("127.0.0.1", 0), Handler)) as origin:
        yield origin + "/"


def capacity_of(
    slots: int | None, throttle: int | None = None, path: str = "", cold: int = 0, burst: range = range(0)
) -> Capacity:
    with (
        server(slots, throttle, cold, burst) as url,
        httpx.Client(limits=httpx.Limits(max_connections=PROBE)) as client,
    ):
        return parallel_capacity(lambda: client.get(url + path).status_code)


@pytest.mark.parametrize("slots", [1, 2])
def test_a_target_that_queues_gets_no_more_requests_in_flight_than_it_serves(slots: int) -> None:
    capacity = capacity_of(slots)
    assert 1 <= bounded_workers(SUGGESTED, capacity) <= slots, capacity


def test_a_target_whose_workers_start_cold_is_measured_warm() -> None:
    """Two workers, each slow on its first request: timed alone first, they made one request seem long and
    the target seem to serve the whole batch side by side (issue 27's gunicorn, on a loaded machine)."""
    capacity = capacity_of(2, cold=2)
    assert 1 <= bounded_workers(SUGGESTED, capacity) <= 2, capacity


def test_a_burst_of_load_while_the_request_is_timed_alone_leaves_the_bound() -> None:
    """Another process's burst slows the two requests after the first batch (the first timed alone): one
    slow median alone made two workers seem to serve the whole batch side by side (the DRF backend under
    gunicorn, on a loaded CI runner: three and four requests in flight)."""
    capacity = capacity_of(2, burst=range(PROBE + 1, PROBE + 3))
    assert 1 <= bounded_workers(SUGGESTED, capacity) <= 2, capacity


def test_a_target_that_serves_side_by_side_keeps_what_its_latency_asks_for() -> None:
    capacity = capacity_of(None)
    assert bounded_workers(SUGGESTED, capacity) == SUGGESTED, capacity


def test_a_throttled_target_serves_what_it_answered_and_says_it_refused_the_rest() -> None:
    """429 past four in flight is a measurement: four served side by side, four refused."""
    capacity = capacity_of(None, throttle=4)
    assert (capacity.sent, capacity.answered, capacity.refused_with) == (PROBE, 4, 429), capacity
    assert bounded_workers(SUGGESTED, capacity) == 4
    assert capacity.describe().startswith("the target refused 4 of 8 sent at once with 429")


def test_a_throttled_target_that_also_queues_gets_what_it_serves_at_once() -> None:
    capacity = capacity_of(1, throttle=4)
    assert capacity.answered == 4 and bounded_workers(SUGGESTED, capacity) == 1, capacity


def test_a_target_refusing_a_request_sent_alone_gets_one_worker() -> None:
    capacity = capacity_of(None, throttle=0)
    assert (capacity.sent, capacity.answered, capacity.refused_with) == (1, 0, 429), capacity
    assert bounded_workers(SUGGESTED, capacity) == 1
    assert capacity.describe() == "the target refused a request sent alone with 429"


def test_a_request_that_fails_in_the_probe_is_raised_not_measured() -> None:
    with server(None) as url, httpx.Client() as client, pytest.raises(httpx.HTTPStatusError):
        parallel_capacity(lambda: client.get(url + "fail").raise_for_status().status_code)


@pytest.mark.parametrize(
    ("capacity", "workers"),
    [
        (Capacity(PROBE, PROBE, 2.0), 2),
        (Capacity(PROBE, PROBE, 1.6), 1),
        (Capacity(PROBE, PROBE, 7.0), SUGGESTED),
        (Capacity(PROBE, PROBE, PROBE * 0.6), SUGGESTED),
        (Capacity(PROBE, 5, 5.0, 429), 5),
        (Capacity(PROBE, 4, 1.2, 503), 1),
        (Capacity(PROBE, 0, 0.0, 429), 1),
    ],
)
def test_the_capacity_bound_only_ever_lowers_the_suggestion(capacity: Capacity, workers: int) -> None:
    assert bounded_workers(SUGGESTED, capacity) == workers
    assert bounded_workers(1, capacity) == 1
