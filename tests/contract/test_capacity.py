"""`--workers auto` keeps no more requests in flight than a target serves at once: a real threaded HTTP
server on a loopback port, which serves `slots` requests at a time (the rest wait, as in a small
gunicorn's backlog) or every request side by side (as a far target, whose wait is the network's)."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from contract_tests.client.capacity import PROBE, bounded_workers, parallel_capacity

SERVICE_S = 0.15
"""Each request's time on the server: long beside the machine's noise."""
SUGGESTED = 16


class Server(ThreadingHTTPServer):
    request_queue_size = 64  # listen()'s backlog: the default 5 drops a batch's connections (a 1 s retry)


@contextlib.contextmanager
def server(slots: int | None) -> Iterator[str]:
    """A server on a free loopback port taking SERVICE_S a request, `slots` at a time (None: all at once)."""
    gate = threading.Semaphore(slots) if slots is not None else contextlib.nullcontext()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            with gate:
                time.sleep(SERVICE_S)
            self.send_response(503 if self.path == "/fail" else 200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

        def log_message(self, format: str, *args: object) -> None:
            """Quiet."""

    httpd = Server(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    finally:
        httpd.shutdown()
        httpd.server_close()


def workers_for(slots: int | None) -> tuple[int, float]:
    with server(slots) as url, httpx.Client(limits=httpx.Limits(max_connections=PROBE)) as client:
        capacity = parallel_capacity(lambda: client.get(url).raise_for_status())
    return bounded_workers(SUGGESTED, capacity), capacity


@pytest.mark.parametrize("slots", [1, 2])
def test_a_target_that_queues_gets_no_more_requests_in_flight_than_it_serves(slots: int) -> None:
    workers, capacity = workers_for(slots)
    assert 1 <= workers <= slots, f"capacity measured {capacity:.2f}"


def test_a_target_that_serves_side_by_side_keeps_what_its_latency_asks_for() -> None:
    workers, capacity = workers_for(None)
    assert workers == SUGGESTED, f"capacity measured {capacity:.2f}"


def test_a_request_that_fails_in_the_probe_is_raised_not_measured() -> None:
    with server(None) as url, httpx.Client() as client, pytest.raises(httpx.HTTPStatusError):
        parallel_capacity(lambda: client.get(url + "fail").raise_for_status())


def test_the_capacity_bound_only_ever_lowers_the_suggestion() -> None:
    assert bounded_workers(3, 2.0) == 2
    assert bounded_workers(3, 1.6) == 1
    assert bounded_workers(1, 7.0) == 1
    assert bounded_workers(16, PROBE * 0.6) == 16
