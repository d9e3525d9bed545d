"""Whether a target answers a request while another is still arriving (contract_tests/client/arrival.py),
against real servers on loopback: the mock under uvicorn and a threaded server answer side by side, and
while a whole wave of race tries is arriving; a pool of two threads answers side by side but not while a
wave arrives; a one-thread server and a proxy serialising requests do not; a one-thread server behind
nginx passing bodies on as they come does not either (the held create tells it); behind nginx reading
whole requests first (its default) and behind a threaded proxy doing the same, the probe says it cannot
see the server; a proxy from the environment, a refused connection and a target that drops the held
request leave the probe unable to tell, never wrong. How the checks of concurrent writes use it is in
tests/contract_tests/judge/domain/test_races.py."""

from __future__ import annotations

import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from contract_tests.client.arrival import BUFFERED, HOLD_S, Arrival, probed
from contract_tests.client.bounded import Limits, Trust
from contract_tests.options import DEFAULT_MAX_RESPONSE_SIZE
from mock_server.app import create_app
from mock_server.settings import DEFAULT_API_KEY, Settings
from tests.support.live import ThreadedServer, running, serving_stdlib
from tests.support.ports import BACKLOG, free_port
from tests.support.zoo.http10 import http10_in_front_of
from tests.support.zoo.nginx import nginx_in_front_of
from tests.support.zoo.tls import make_certificates

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

    def do_POST(self) -> None:
        """A create read whole, as a server reads a body it needs, then refused: no item is made here."""
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_error(400, "no creates here")

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""


class TwoThreads(HTTPServer):
    """A server with a pool of two threads, each serving one connection at a time: gunicorn's two sync
    workers, in a test's process."""

    request_queue_size = BACKLOG

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


def write(origin: str) -> httpx.Request:
    return httpx.Request("POST", origin + LINES, headers={"X-API-Key": DEFAULT_API_KEY})


def probe(origin: str, limits: Limits = LIMITS) -> Arrival:
    """What the probe sees of `origin`, with a read and a create of its product lines."""
    return probed(read(origin), write(origin), limits)


def test_the_mock_under_uvicorn_answers_while_another_request_is_arriving() -> None:
    with running(create_app(Settings())) as origin:
        before = httpx.get(origin + LINES, headers={"X-API-Key": DEFAULT_API_KEY}).json()["count"]
        seen = probe(origin)
        after = httpx.get(origin + LINES, headers={"X-API-Key": DEFAULT_API_KEY}).json()["count"]
    assert (seen.side_by_side, seen.takes_a_wave, seen.buffered) == (True, True, False), seen.seen
    assert after == before  # the held create was refused as malformed: it made no item


def test_a_threaded_server_answers_side_by_side_even_while_a_wave_arrives() -> None:
    with serving_stdlib(ThreadedServer(("127.0.0.1", 0), Lines)) as origin:
        seen = probe(origin)
    assert (seen.side_by_side, seen.takes_a_wave, seen.buffered) == (True, True, False), seen.seen


def test_a_pool_of_two_threads_answers_side_by_side_but_not_while_a_wave_arrives() -> None:
    with serving_stdlib(TwoThreads(("127.0.0.1", 0), Lines)) as origin:
        seen = probe(origin)
        after = httpx.get(origin + LINES, timeout=5)  # released: the pool is free again
    assert (seen.side_by_side, seen.takes_a_wave) == (True, False)
    assert after.status_code == 200


def test_a_one_thread_server_takes_requests_one_at_a_time_and_still_answers_both() -> None:
    with serving_stdlib(HTTPServer(("127.0.0.1", 0), Lines)) as origin:
        started = time.monotonic()
        seen = probe(origin)
        took = time.monotonic() - started
        after = httpx.get(origin + LINES, timeout=5)  # released: the server is free again
    assert (seen.side_by_side, seen.takes_a_wave) == (False, None)
    assert "one at a time" in seen.seen and "one worker, or a proxy serialising requests" in seen.seen
    assert HOLD_S <= took < HOLD_S + 5 and after.status_code == 200


def test_a_proxy_serialising_requests_takes_them_one_at_a_time_and_a_threaded_one_does_not(tmp_path: Path) -> None:
    with running(create_app(Settings())) as upstream:
        with http10_in_front_of(upstream, tmp_path, one_at_a_time=True) as origin:
            serialised = probe(origin)
        with http10_in_front_of(upstream, tmp_path) as origin:
            threaded = probe(origin)
    assert (serialised.side_by_side, threaded.side_by_side) == (False, True)
    assert (threaded.buffered, threaded.seen) == (True, BUFFERED)  # it reads a body whole before forwarding


def behind_nginx(server: type[HTTPServer], directory: Path, *, request_buffering: bool) -> Arrival:
    """What the probe sees of `server` (serving `Lines`) behind nginx over TLS, its files in `directory`."""
    directory.mkdir(exist_ok=True)
    certificates = make_certificates(directory)
    limits = Limits(30, DEFAULT_MAX_RESPONSE_SIZE, Trust(ca_bundle=certificates.ca))
    with (
        serving_stdlib(server(("127.0.0.1", 0), Lines)) as upstream,
        nginx_in_front_of(upstream, certificates, directory, request_buffering=request_buffering) as origin,
    ):
        return probe(origin, limits)


def test_one_worker_behind_nginx_passing_bodies_on_is_told_by_the_held_create(tmp_path: Path) -> None:
    """nginx reads a request's header block whole before passing it on, so the held read never reaches the
    server; the held create's body does, and the one thread waits for it."""
    one = behind_nginx(HTTPServer, tmp_path / "one", request_buffering=False)
    threaded = behind_nginx(ThreadedServer, tmp_path / "threaded", request_buffering=False)
    assert (one.side_by_side, one.buffered) == (False, False), one.seen
    assert "while a create, sent before it, was still sending its body" in one.seen
    assert (threaded.side_by_side, threaded.buffered) == (True, False), threaded.seen


def test_behind_nginx_reading_whole_requests_it_says_the_server_cannot_be_seen(tmp_path: Path) -> None:
    """nginx's default: nothing reaches the server before it came whole, so one thread behind it looks like
    many, and the probe says so instead of judging."""
    seen = behind_nginx(HTTPServer, tmp_path, request_buffering=True)
    assert (seen.side_by_side, seen.buffered, seen.seen) == (True, True, BUFFERED)


def test_through_a_proxy_from_the_environment_it_cannot_tell(monkeypatch: pytest.MonkeyPatch) -> None:
    with running(create_app(Settings())) as origin:
        monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
        seen = probe(origin)
        monkeypatch.setenv("NO_PROXY", "127.0.0.1")
        excepted = probe(origin)
    assert (seen.side_by_side, seen.seen) == (None, "a proxy from the environment stands before the target")
    assert excepted.side_by_side is True


def test_a_refused_connection_cannot_tell() -> None:
    seen = probe(f"http://127.0.0.1:{free_port()}")
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
        seen = probe(f"http://127.0.0.1:{listener.getsockname()[1]}")
    finally:
        stop.set()
        listener.close()
    assert seen.side_by_side is None, seen.seen
