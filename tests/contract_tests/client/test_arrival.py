"""Whether a target answers a request while another is still arriving (contract_tests/client/arrival.py),
against real servers on loopback: the mock under uvicorn and a threaded server answer side by side, and
while a whole wave of race tries is arriving; a pool of two threads answers side by side but not while a
wave arrives; a one-thread server and a proxy serialising requests do not; a proxy from the environment,
a refused connection and a target that drops the held request leave the probe unable to tell, never
wrong. How the checks of concurrent writes use it is in tests/contract_tests/judge/domain/test_races.py."""

from __future__ import annotations

import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, HTTPServer, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from contract_tests.client.arrival import HOLD_S, probed
from contract_tests.client.bounded import Limits
from contract_tests.options import DEFAULT_MAX_RESPONSE_SIZE
from mock_server.app import create_app
from mock_server.settings import DEFAULT_API_KEY, Settings
from tests.support.live import free_port, running, serving_stdlib
from tests.support.zoo.http10 import http10_in_front_of

LINES = "/shop/api/v1/productlines/"
LIMITS = Limits(30, DEFAULT_MAX_RESPONSE_SIZE)


class Lines(BaseHTTPRequestHandler):
    """An empty page of product lines, HTTP/1.0: one request a connection."""

    def do_GET(self) -> None:
        body = b'{"count": 0, "next": null, "previous": null, "results": []}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""


class TwoThreads(HTTPServer):
    """A server with a pool of two threads, each serving one connection at a time: gunicorn's two sync
    workers, in a test's process."""

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler]) -> None:
        super().__init__(address, handler)
        self.pool = ThreadPoolExecutor(max_workers=2)

    def process_request(self, request: Any, client_address: Any) -> None:
        self.pool.submit(self._serve, request, client_address)

    def _serve(self, request: Any, client_address: Any) -> None:
        try:
            self.finish_request(request, client_address)
        finally:
            self.shutdown_request(request)

    def server_close(self) -> None:
        super().server_close()
        self.pool.shutdown(wait=False, cancel_futures=True)


def read(origin: str) -> httpx.Request:
    return httpx.Request("GET", origin + LINES, headers={"X-API-Key": DEFAULT_API_KEY})


def test_the_mock_under_uvicorn_answers_while_another_request_is_arriving() -> None:
    with running(create_app(Settings())) as origin:
        seen = probed(read(origin), LIMITS)
    assert (seen.side_by_side, seen.takes_a_wave) == (True, True), seen.seen


def test_a_threaded_server_answers_side_by_side_even_while_a_wave_arrives() -> None:
    with serving_stdlib(ThreadingHTTPServer(("127.0.0.1", 0), Lines)) as origin:
        seen = probed(read(origin), LIMITS)
    assert (seen.side_by_side, seen.takes_a_wave) == (True, True)


def test_a_pool_of_two_threads_answers_side_by_side_but_not_while_a_wave_arrives() -> None:
    with serving_stdlib(TwoThreads(("127.0.0.1", 0), Lines)) as origin:
        seen = probed(read(origin), LIMITS)
        after = httpx.get(origin + LINES, timeout=5)  # released: the pool is free again
    assert (seen.side_by_side, seen.takes_a_wave) == (True, False)
    assert after.status_code == 200


def test_a_one_thread_server_takes_requests_one_at_a_time_and_still_answers_both() -> None:
    with serving_stdlib(HTTPServer(("127.0.0.1", 0), Lines)) as origin:
        started = time.monotonic()
        seen = probed(read(origin), LIMITS)
        took = time.monotonic() - started
        after = httpx.get(origin + LINES, timeout=5)  # released: the server is free again
    assert (seen.side_by_side, seen.takes_a_wave) == (False, None)
    assert "one at a time" in seen.seen and "one worker, or a proxy serialising requests" in seen.seen
    assert HOLD_S <= took < HOLD_S + 5 and after.status_code == 200


def test_a_proxy_serialising_requests_takes_them_one_at_a_time_and_a_threaded_one_does_not(tmp_path: Path) -> None:
    with running(create_app(Settings())) as upstream:
        with http10_in_front_of(upstream, tmp_path, one_at_a_time=True) as origin:
            serialised = probed(read(origin), LIMITS)
        with http10_in_front_of(upstream, tmp_path) as origin:
            threaded = probed(read(origin), LIMITS)
    assert (serialised.side_by_side, threaded.side_by_side) == (False, True)


def test_through_a_proxy_from_the_environment_it_cannot_tell(monkeypatch: pytest.MonkeyPatch) -> None:
    with running(create_app(Settings())) as origin:
        monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
        seen = probed(read(origin), LIMITS)
        monkeypatch.setenv("NO_PROXY", "127.0.0.1")
        excepted = probed(read(origin), LIMITS)
    assert (seen.side_by_side, seen.seen) == (None, "a proxy from the environment stands before the target")
    assert excepted.side_by_side is True


def test_a_refused_connection_cannot_tell() -> None:
    seen = probed(read(f"http://127.0.0.1:{free_port()}"), LIMITS)
    assert (seen.side_by_side, seen.seen) == (None, "the probe's connection failed (ConnectionRefusedError)")


def test_a_target_that_drops_the_held_request_and_fails_the_other_cannot_tell() -> None:
    """A listener that accepts and closes every connection at once: the held request is dropped, and the
    read fails. The probe says it could not tell, and raises nothing."""
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def drop() -> None:
        while not stop.is_set():
            connection, _ = listener.accept()
            connection.close()

    threading.Thread(target=drop, daemon=True).start()
    try:
        seen = probed(read(f"http://127.0.0.1:{listener.getsockname()[1]}"), LIMITS)
    finally:
        stop.set()
        listener.close()
    assert seen.side_by_side is None, seen.seen
