"""The dashboard's live stream (/__mock__/ui/stream) on real uvicorn: what it sends, who may open it,
and its bounds: at most MAX_STREAMS streams, a client that does not read is dropped, and the mock's
memory stops growing with traffic while 100 clients hold streams they never read."""

from __future__ import annotations

import contextlib
import gc
import json
import socket
import time
import tracemalloc
from collections.abc import Iterator

import httpx
import pytest

from mock_server.app import MockApp, create_app
from mock_server.control.dashboard.stream import MAX_STREAMS, QUEUE_ROWS, Broadcast
from mock_server.settings import DEFAULT_API_KEY, Settings
from tests.support.live import running

STREAM = "/__mock__/ui/stream"
PRODUCT = "/shop/api/v1/products/S10_1678/"
KEY = {"X-API-Key": DEFAULT_API_KEY}
QUEUE_ROWS_AT_MOST = 256  # the bound docs/frontend.md states: a test of it must not follow the constant


def opened(origin: str, receive_buffer: int = 0) -> socket.socket:
    """A raw connection that asked for the stream and reads nothing (a small receive buffer: slow at once)."""
    host, port = origin.removeprefix("http://").split(":")
    sock = socket.socket()
    if receive_buffer:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
    sock.connect((host, int(port)))
    sock.sendall(f"GET {STREAM} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
    return sock


def broadcast_of(app: MockApp) -> Broadcast:
    """The dashboard's broadcast, found as the journal's subscriber (there is one while a stream is open)."""
    deadline = time.monotonic() + 5
    while not app.journal.subscribers:
        assert time.monotonic() < deadline, "no stream subscribed to the journal"
        time.sleep(0.01)
    broadcast = app.journal.subscribers[0].__self__  # type: ignore[attr-defined]
    assert isinstance(broadcast, Broadcast)
    return broadcast


def wait_until(condition: object, seconds: float = 5) -> None:
    deadline = time.monotonic() + seconds
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


@pytest.fixture
def served() -> Iterator[tuple[MockApp, str]]:
    app = create_app(Settings())
    with running(app) as origin:
        yield app, origin


def test_a_stream_sends_each_exchange_as_the_journal_shows_it_masked(served: tuple[MockApp, str]) -> None:
    app, origin = served
    with httpx.Client(base_url=origin, timeout=5) as http, http.stream("GET", STREAM) as stream:
        assert stream.status_code == 200 and stream.headers["content-type"].startswith("text/event-stream")
        lines = stream.iter_lines()
        assert next(lines) == ": open"
        http.get(PRODUCT, headers={**KEY, "X-Mock-Session": "s1"})
        event = [next(line for line in lines if line), next(lines)]
    assert event[0] == "event: exchange"
    shown = json.loads(event[1].removeprefix("data: "))
    assert (shown["method"], shown["path"], shown["status"], shown["operationId"]) == (
        "GET",
        PRODUCT,
        200,
        "get_product",
    )
    assert shown["session"] == "s1" and shown["request"]["headers"]["x-api-key"] == "***"
    assert DEFAULT_API_KEY not in event[1]
    wait_until(lambda: app.journal.subscribers == [])  # the last stream closed: recording is as before


def test_with_the_state_in_redis_a_stream_sends_this_replicas_exchanges(redis_url: str) -> None:
    app = create_app(Settings(state=redis_url))
    with running(app) as origin, httpx.Client(base_url=origin, timeout=5) as http, http.stream("GET", STREAM) as stream:
        lines = stream.iter_lines()
        assert next(lines) == ": open"
        http.get(PRODUCT, headers=KEY)
        event = [next(line for line in lines if line), next(lines)]
    assert event[0] == "event: exchange"
    assert json.loads(event[1].removeprefix("data: "))["operationId"] == "get_product"


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({}, 401),
        ({"Authorization": "Bearer wrong"}, 401),
        ({"Authorization": "Bearer dash-token", "Origin": "http://evil.example"}, 403),
        ({"Authorization": "Bearer dash-token", "Host": "rebound.example"}, 403),
    ],
)
def test_the_stream_and_the_admin_calls_need_what_the_admin_api_needs(headers: dict[str, str], status: int) -> None:
    app = create_app(Settings(admin_token="dash-token"))
    with running(app) as origin, httpx.Client(base_url=origin, timeout=5) as http:
        for path in (STREAM, "/__mock__/ui/operations"):
            assert http.get(path, headers=headers).status_code == status
        # the page's own files hold no data: a browser navigating to them cannot send the token
        page = http.get("/__mock__/ui/", headers={k: v for k, v in headers.items() if k != "Authorization"})
        assert page.status_code == (200 if status == 401 else 403)
        assert app.journal.subscribers == []


def test_the_dashboard_is_gone_with_the_admin_api() -> None:
    with running(create_app(Settings(admin=False))) as origin:
        for path in ("/__mock__/ui/", STREAM):
            assert httpx.get(origin + path).status_code == 404


def test_a_client_that_does_not_read_is_dropped_and_the_journal_loses_its_subscriber(
    served: tuple[MockApp, str],
) -> None:
    app, origin = served
    slow = opened(origin, receive_buffer=4096)
    with contextlib.closing(slow), httpx.Client(base_url=origin, timeout=5) as http:
        broadcast = broadcast_of(app)
        body = {"productline": "x" * 3000}  # a 4 KiB-ish exchange
        sent = 0
        while broadcast.listeners and sent < 4 * QUEUE_ROWS_AT_MOST:
            http.post("/shop/api/v1/productlines/", json=body, headers=KEY)
            sent += 1
            assert all(len(listener.rows) <= QUEUE_ROWS for listener in broadcast.listeners)
        assert broadcast.listeners == [] and app.journal.subscribers == [], f"not dropped after {sent} requests"
        slow.settimeout(5)
        with contextlib.suppress(ConnectionResetError):
            while slow.recv(65536):  # what was sent before the drop, then the end: the mock hung up
                pass
        assert http.get(PRODUCT, headers=KEY).status_code == 200


def test_memory_stops_growing_with_traffic_while_100_clients_hold_streams_they_never_read(
    served: tuple[MockApp, str],
) -> None:
    app, origin = served
    tracemalloc.start()
    try:
        clients = [opened(origin, receive_buffer=4096) for _ in range(100)]
        with contextlib.ExitStack() as stack, httpx.Client(base_url=origin, timeout=10) as http:
            for client in clients:
                stack.enter_context(contextlib.closing(client))
            broadcast = broadcast_of(app)
            wait_until(lambda: len(broadcast.listeners) == MAX_STREAMS)
            refused = sum(b" 503 " in client.recv(1024).split(b"\r\n")[0] for client in clients[MAX_STREAMS:])
            assert refused == 100 - MAX_STREAMS

            def traffic(count: int) -> int:
                for _ in range(count):
                    http.post("/shop/api/v1/productlines/", json={"productline": "y" * 3000}, headers=KEY)
                    assert len(broadcast.listeners) <= MAX_STREAMS
                    assert all(len(listener.rows) <= QUEUE_ROWS for listener in broadcast.listeners)
                gc.collect()
                return tracemalloc.get_traced_memory()[0]

            after_some = traffic(300)
            after_more = traffic(1000)
        assert after_more - after_some < 2 * 2**20, (after_some, after_more)
    finally:
        tracemalloc.stop()
