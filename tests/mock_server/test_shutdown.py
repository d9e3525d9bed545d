"""The mock stops when asked: SIGTERM (a process manager, a container runtime: to the process) or
SIGINT (Ctrl-C at a terminal: to its whole process group), with one worker and with `--workers 2` on
a real redis-server, while three dashboard streams and a slow client are open (and, with one worker,
a validation-proxy exchange with a backend that never answers).

Each test starts `python -m mock_server` as a process and speaks raw HTTP to it, to read exactly
what a client gets: the end of a stream (its last chunk, then the connection closed), not a reset.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from mock_server.arguments import parse_settings
from shop_contract.document import bundled_fixtures
from tests.conftest import API_KEY_HEADERS
from tests.mock_server.state.test_redis_store import LINES, assert_sound, open_redis_store
from tests.mock_server.state.test_store import line
from tests.support.live import TRUSTED
from tests.support.processes import signalled_at

TOKEN = "stop-token"
GRACE_S = 2.0  # the default --shutdown-timeout, which the issue asks for
SLACK_S = 1.0  # a loaded 2-core machine: the bound is the grace plus this, from the signal to the exit
STREAMS = 3
READ_S = 5  # waiting for a peer's bytes: no timing claim


class Mock:
    """`python -m mock_server --port 0 ARGS` in its own process group, serving once this returns."""

    def __init__(self, tmp_path: Path, *args: str) -> None:
        port_file = tmp_path / "port"
        self.sockets: list[socket.socket] = []
        command = [sys.executable, "-m", "mock_server", "--port", "0", "--port-file", str(port_file)]
        self.process = subprocess.Popen(
            [*command, "--admin-token", TOKEN, "--log-level", "warning", *args],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        deadline = time.monotonic() + 60
        while not port_file.exists() or not port_file.read_text().endswith("\n"):
            assert self.process.poll() is None, self.log()
            assert time.monotonic() < deadline, "the mock did not write its port file"
            time.sleep(0.05)
        self.port = int(port_file.read_text())
        self.origin = f"http://127.0.0.1:{self.port}"
        while True:  # workers: the port is bound before they listen
            try:
                httpx.get(
                    f"{self.origin}/__mock__/health", headers={"Authorization": f"Bearer {TOKEN}"}, verify=TRUSTED
                )
                break
            except httpx.TransportError:
                assert self.process.poll() is None and time.monotonic() < deadline, self.log()
                time.sleep(0.1)

    def connect(self, request: bytes) -> socket.socket:
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=READ_S)
        self.sockets.append(sock)
        sock.sendall(request)
        return sock

    def stream(self) -> socket.socket:
        """A dashboard stream, open (its first event read), as the page opens it: with the admin token."""
        head = (
            f"GET /__mock__/ui/stream HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\nAuthorization: Bearer {TOKEN}\r\n\r\n"
        )
        sock = self.connect(head.encode())
        received = b""
        while b": open" not in received:
            data = sock.recv(4096)
            assert data, f"the stream closed before it opened: {received!r}"
            received += data
        assert received.startswith(b"HTTP/1.1 200 "), received
        return sock

    def slow_request(self) -> socket.socket:
        """A POST whose body never comes whole: a request in flight the mock cannot finish. It asks for a
        `100 Continue`, which uvicorn sends once the app reads the body: then it is surely in flight."""
        head = (
            f"POST {LINES} HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\nX-API-Key: {API_KEY_HEADERS['X-API-Key']}\r\n"
            "Content-Type: application/json\r\nContent-Length: 100\r\nExpect: 100-continue\r\n\r\n"
        )
        sock = self.connect(head.encode())
        interim = b""
        while not interim.endswith(b"\r\n\r\n"):
            data = sock.recv(1)
            assert data, f"the mock closed before it read the body: {interim!r}"
            interim += data
        assert interim.startswith(b"HTTP/1.1 100 "), interim
        sock.sendall(b'{"productline": "Sl')
        return sock

    def signal(self, sig: int, group: bool) -> None:
        if group:  # Ctrl-C: the terminal signals the whole foreground group, workers included
            os.killpg(self.process.pid, sig)
        else:
            self.process.send_signal(sig)

    def log(self) -> str:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        return self.process.stderr.read().decode(errors="replace") if self.process.stderr else ""

    def close(self) -> None:
        for sock in self.sockets:
            sock.close()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()
        if self.process.stderr:
            self.process.stderr.close()


@contextlib.contextmanager
def mock(tmp_path: Path, *args: str) -> Iterator[Mock]:
    started = Mock(tmp_path, *args)
    try:
        yield started
    finally:
        started.close()


def to_the_end(sock: socket.socket) -> bytes:
    """All a connection receives until the peer closes it (a reset fails the test)."""
    received = b""
    with sock:
        while data := sock.recv(65536):
            received += data
    return received


def stopped_within(mock: Mock, sig: int, group: bool, seconds: float) -> float:
    """Signal `mock`, wait for its exit (code 0) at most `seconds`, and say how long it took."""
    children = Path(f"/proc/{mock.process.pid}/task/{mock.process.pid}/children").read_text().split()
    workers = [pid for pid in children if b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes()]
    began = time.monotonic()
    mock.signal(sig, group)
    try:
        code = mock.process.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        pytest.fail(f"still running {seconds:g} s after the signal:\n{mock.log()}")
    took = time.monotonic() - began
    assert code == 0, mock.log()
    assert all(not Path(f"/proc/{pid}").exists() for pid in workers), "a worker outlived the mock"
    return took


class Writer(threading.Thread):
    """POSTs product lines one after the other until the mock stops answering; keeps the names
    whose 201 it read (what the mock acknowledged)."""

    def __init__(self, origin: str) -> None:
        super().__init__(daemon=True)
        self.origin = origin
        self.acknowledged: list[str] = []
        self.running = threading.Event()

    def run(self) -> None:
        with httpx.Client(base_url=self.origin, headers=API_KEY_HEADERS, timeout=READ_S) as http:
            for number in range(100_000):
                name = f"Stop {number}"
                try:
                    answer = http.post(LINES, json=line(name))
                except httpx.TransportError:
                    return
                if answer.status_code != 201:
                    return
                self.acknowledged.append(name)
                self.running.set()


KINDS = [
    pytest.param(signal.SIGTERM, False, id="SIGTERM-to-the-process"),
    pytest.param(signal.SIGINT, True, id="SIGINT-to-the-group"),
]


def assert_ended_cleanly(streams: list[socket.socket], slow: socket.socket) -> None:
    for stream in streams:
        rest = to_the_end(stream)  # the events after the first, the body's last chunk (empty), then closed
        assert rest == b"0\r\n\r\n" or rest.endswith(b"\n\n\r\n0\r\n\r\n"), rest[-200:]
    cut = to_the_end(slow)
    assert cut.startswith(b"HTTP/1.1 503 ") and b"application/problem+json" in cut, cut


@contextlib.contextmanager
def silent_backend() -> Iterator[tuple[str, list[socket.socket]]]:
    """A backend that accepts connections and never answers: its origin, and the connections it holds."""
    held: list[socket.socket] = []
    with socket.create_server(("127.0.0.1", 0)) as listener:

        def accept() -> None:
            with contextlib.suppress(OSError):  # the listener closed
                while True:
                    held.append(listener.accept()[0])

        threading.Thread(target=accept, daemon=True).start()
        try:
            yield f"http://127.0.0.1:{listener.getsockname()[1]}", held
        finally:
            with contextlib.suppress(OSError):
                listener.shutdown(socket.SHUT_RDWR)  # wakes the accepting thread
            for sock in held:
                sock.close()


@pytest.mark.parametrize(("sig", "group"), KINDS)
def test_one_worker_stops_within_its_grace_with_streams_a_slow_client_and_a_proxy_exchange_open(
    tmp_path: Path, sig: int, group: bool
) -> None:
    with silent_backend() as (backend, held), mock(tmp_path, "--empty", "--proxy", backend) as served:
        streams = [served.stream() for _ in range(STREAMS)]
        slow = served.slow_request()
        proxied = served.connect(
            f"GET /shop/api/v1/products/ HTTP/1.1\r\nHost: 127.0.0.1:{served.port}\r\n\r\n".encode()
        )
        deadline = time.monotonic() + READ_S
        while not held:  # the exchange with the backend is under way
            assert time.monotonic() < deadline, "the mock did not call the backend"
            time.sleep(0.05)
        took = stopped_within(served, sig, group, GRACE_S + SLACK_S)
        assert_ended_cleanly(streams, slow)
        assert to_the_end(proxied).startswith(b"HTTP/1.1 503 ")  # the backend never answered: cut
    assert took > GRACE_S / 2  # the requests in flight were given their time (most of the grace) before the cut


@pytest.mark.parametrize(("sig", "group"), KINDS)
def test_two_workers_stop_within_the_grace_and_leave_the_redis_state_whole(
    tmp_path: Path, redis_url: str, sig: int, group: bool
) -> None:
    with mock(tmp_path, "--empty", "--state", redis_url, "--workers", "2") as served:
        streams = [served.stream() for _ in range(STREAMS)]
        slow = served.slow_request()
        writer = Writer(served.origin)
        writer.start()
        assert writer.running.wait(READ_S)
        stopped_within(served, sig, group, GRACE_S + SLACK_S)
        writer.join(READ_S)
        assert_ended_cleanly(streams, slow)
    store = open_redis_store(redis_url, dict)
    for name in writer.acknowledged:  # every write the mock acknowledged is there, whole
        assert store.get("productlines", name) == line(name)
    assert_sound(redis_url)


@pytest.mark.parametrize(
    ("args", "sig", "group"),
    [
        pytest.param(["--empty"], signal.SIGTERM, False, id="one-worker-SIGTERM-twice"),
        pytest.param(["--empty", "--workers", "2"], signal.SIGINT, True, id="two-workers-Ctrl-C-twice"),
    ],
)
def test_a_second_signal_stops_at_once(tmp_path: Path, redis_url: str, args: list[str], sig: int, group: bool) -> None:
    with mock(tmp_path, "--state", redis_url, "--shutdown-timeout", "60", *args) as served:
        served.slow_request()  # holds the mock its whole grace (a minute)
        served.signal(sig, group)
        time.sleep(0.5)
        assert served.process.poll() is None, "the first signal did not wait for the request in flight"
        stopped_within(served, sig, group, SLACK_S)


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "3601", "soon"])
def test_a_bad_shutdown_timeout_is_one_line_and_exit_2(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert parse_settings(["--shutdown-timeout", "0.5"]).shutdown_timeout == 0.5
    with pytest.raises(SystemExit) as exited:
        parse_settings(["--shutdown-timeout", value])
    assert exited.value.code == 2
    last = capsys.readouterr().err.splitlines()[-1]  # after argparse's usage line
    assert last.startswith("shop-mock: error: ") and "--shutdown-timeout" in last, last


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_a_stop_while_the_data_loads_exits_0_in_one_line(sig: str) -> None:
    """A large data set loads for seconds: Ctrl-C there was a KeyboardInterrupt's traceback (exit 130), and
    SIGTERM a kill (143, no line), where a stop while serving is exit 0. The signal comes the moment the
    mock opens its products to read them (tests/support/at_creation)."""
    env = signalled_at(bundled_fixtures() / "products.json", sig, on_read=True)
    command = [sys.executable, "-m", "mock_server", "--port", "0"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, env=env, check=False)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "shop-mock: stopped before serving\n")
