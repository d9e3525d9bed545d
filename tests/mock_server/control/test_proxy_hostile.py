"""The validation proxy in front of a hostile backend: a real `python -m mock_server --proxy` process,
and a backend written here on raw sockets (loopback, a thread per connection) that answers as no
well-behaved server would: a head or a body a byte at a time, a body without end or cut short, a
gzip bomb, a 68 KiB head, JSON nested 100,000 deep, megabyte strings, millions of wrong items.

What the documentation promises (docs/security.md): a backend that does not answer within the proxy's
deadline is 502; a head or body past the proxy's size or decompression limit is 502 naming the
limit, and the mock's memory stays bounded (its resident memory is read from /proc, with a generous
bound); anything else the backend answers is passed on unchanged and what breaks the spec is
reported, each violation cut to a bounded length in the report, the journal and the log, a bounded
number of them per answer.
"""

from __future__ import annotations

import gzip
import json
import socket
import subprocess
import sys
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from mock_server.control.backend_client import MAX_DECODED_BYTES, MAX_HEAD_BYTES, MAX_RECEIVED_BYTES
from mock_server.control.violations.memory import VIOLATIONS_PER_PART
from mock_server.settings import DEFAULT_FIXTURES
from mock_server.spec.quoting import MESSAGE_CHARS
from tests.conftest import API_KEY_HEADERS, BACKEND
from tests.support.live import TRUSTED

PRODUCT_PATH = f"{BACKEND}/products/S10_1678/"
PRODUCT = json.loads((DEFAULT_FIXTURES / "products.json").read_text())[0]
MIB = 1024 * 1024
MEMORY_BOUND = 128 * MIB  # generous: the limits are 10 MiB; the unbounded proxy took +396 MiB and +513 MiB
Answer = Callable[[socket.socket, "HostileBackend"], None]


class HostileBackend:
    """Answers each request (read whole first) with `answer(connection, self)` until the block ends;
    `stopped` is set then, for answers that would otherwise go on forever."""

    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.stopped = threading.Event()
        self.requests: list[bytes] = []
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(0.1)
        self.origin = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.thread = threading.Thread(target=self.serve, daemon=True)

    def __enter__(self) -> HostileBackend:
        self.thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stopped.set()
        self.thread.join(timeout=5)
        self.listener.close()

    def serve(self) -> None:
        while not self.stopped.is_set():
            try:
                connection, _ = self.listener.accept()
            except TimeoutError:
                continue
            threading.Thread(target=self.converse, args=(connection,), daemon=True).start()

    def converse(self, connection: socket.socket) -> None:
        with connection:
            connection.settimeout(30)
            try:
                self.requests.append(read_request(connection))
                self.answer(connection, self)
            except OSError:  # the proxy hung up on us: what a bounded client does
                pass


def read_request(connection: socket.socket) -> bytes:
    """One request, head and body (by its Content-Length)."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += connection.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(
        (int(line.split(b":", 1)[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")),
        0,
    )
    while len(body) < length:
        body += connection.recv(65536)
    return head + b"\r\n\r\n" + body


def head(*headers: str, status: str = "200 OK") -> bytes:
    return ("\r\n".join([f"HTTP/1.1 {status}", *headers, "connection: close"]) + "\r\n\r\n").encode()


def answering(body: bytes, *headers: str, status: str = "200 OK") -> Answer:
    """A backend answer given whole: `body` with a Content-Length."""

    def answer(connection: socket.socket, backend: HostileBackend) -> None:
        connection.sendall(head(*headers, f"content-length: {len(body)}", status=status) + body)

    return answer


@contextmanager
def proxy_mock(backend: str, tmp_path: Path, *options: str) -> Iterator[tuple[subprocess.Popen[bytes], str, Path]]:
    """`python -m mock_server --proxy BACKEND`: the process, its origin, and the file its log goes to."""
    port_file, log = tmp_path / "port", tmp_path / "mock.log"
    with log.open("wb") as log_out:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "mock_server",
                "--port",
                "0",
                "--port-file",
                str(port_file),
                "--empty",
                "--proxy",
                backend,
                *options,
            ],
            stdout=subprocess.DEVNULL,
            stderr=log_out,
        )
    try:
        deadline = time.monotonic() + 60
        while not port_file.exists() or not port_file.read_text().endswith("\n"):
            assert process.poll() is None, log.read_text()
            assert time.monotonic() < deadline, "the mock did not write its port file"
            time.sleep(0.05)
        yield process, f"http://127.0.0.1:{int(port_file.read_text())}", log
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:  # held by an exchange that never ends: the defect under test
            process.kill()
            process.wait(timeout=15)


def memory(pid: int, field: str) -> int:
    """`VmRSS` (resident now) or `VmHWM` (resident at its peak) of process `pid`, in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no {field} for process {pid}")


def client(origin: str) -> httpx.Client:
    return httpx.Client(base_url=origin, headers=API_KEY_HEADERS, timeout=20, verify=TRUSTED)


def trickled_body(connection: socket.socket, backend: HostileBackend) -> None:
    connection.sendall(head("content-type: application/json", "content-length: 1000"))
    while not backend.stopped.wait(0.2):  # one byte every 0.2 s: never a read timeout, never done
        connection.sendall(b" ")


def trickled_head(connection: socket.socket, backend: HostileBackend) -> None:
    for byte in head("content-type: application/json", "content-length: 2") + b"{}":
        if backend.stopped.wait(0.2):
            return
        connection.sendall(bytes([byte]))


@pytest.mark.parametrize("answer", [trickled_body, trickled_head], ids=lambda answer: answer.__name__)
def test_a_backend_that_trickles_is_502_once_the_exchange_deadline_passes(answer: Answer, tmp_path: Path) -> None:
    with HostileBackend(answer) as backend, proxy_mock(backend.origin, tmp_path, "--proxy-timeout", "1") as mock:
        _, origin, log = mock
        with client(origin) as http:
            response = http.get(PRODUCT_PATH)
            assert response.status_code == 502, response.text
            assert response.headers["content-type"] == "application/problem+json"
            assert "did not answer within 1 s" in response.json()["detail"]
            assert http.get("/__mock__/requests").json()[-1]["status"] == 502  # journalled as answered
    assert "Traceback" not in log.read_text()


def cut_short(connection: socket.socket, backend: HostileBackend) -> None:
    connection.sendall(head("content-type: application/json", "content-length: 1000") + b'{"productcode": ')


def not_http(connection: socket.socket, backend: HostileBackend) -> None:
    connection.sendall(b"SSH-2.0-OpenSSH_9.6\r\n" + b"x" * 200_000)


@pytest.mark.parametrize("answer", [cut_short, not_http], ids=lambda answer: answer.__name__)
def test_a_backend_answer_that_is_broken_is_502_naming_the_backend(answer: Answer, tmp_path: Path) -> None:
    with (
        HostileBackend(answer) as backend,
        proxy_mock(backend.origin, tmp_path) as (_, origin, log),
        client(origin) as http,
    ):
        response = http.get(PRODUCT_PATH)
        assert response.status_code == 502, response.text
        detail = response.json()["detail"]
        assert detail.startswith(f"The backend {backend.origin} did not answer") and len(detail) < 2 * MESSAGE_CHARS
    assert "Traceback" not in log.read_text()


def huge_head(connection: socket.socket, backend: HostileBackend) -> None:
    headers = [f"x-padding-{index}: {'p' * 1000}" for index in range(48)]
    body = json.dumps(PRODUCT).encode()
    reason = "O" + "k" * 20_000
    connection.sendall(
        head("content-type: application/json", f"content-length: {len(body)}", *headers, status=f"200 {reason}") + body
    )


def test_a_backend_head_past_the_limit_is_502_and_no_log_line_quotes_it(tmp_path: Path) -> None:
    with (
        HostileBackend(huge_head) as backend,
        proxy_mock(backend.origin, tmp_path) as (_, origin, log),
        client(origin) as http,
    ):
        response = http.get(PRODUCT_PATH)
        assert response.status_code == 502, response.text[:200]
        assert f"a head larger than {MAX_HEAD_BYTES} bytes" in response.json()["detail"]
        journal = http.get("/__mock__/requests")
    assert len(journal.content) < 16 * 1024
    assert all(len(line) < 2 * MESSAGE_CHARS for line in log.read_text().splitlines())


def endless_chunked(connection: socket.socket, backend: HostileBackend) -> None:
    connection.sendall(head("content-type: application/json", "transfer-encoding: chunked"))
    chunk = b"%x\r\n%s\r\n" % (MIB, b"0" * MIB)
    for _ in range(256):  # "endless": more than the unbounded proxy can be allowed to hold in a test
        if backend.stopped.is_set():
            return
        connection.sendall(chunk)


def gzip_bomb(connection: socket.socket, backend: HostileBackend) -> None:
    """256 MiB of zeros, gzipped to a quarter of a MiB."""
    compressor = zlib.compressobj(9, wbits=31)
    zeros = bytes(MIB)
    bomb = b"".join([*(compressor.compress(zeros) for _ in range(256)), compressor.flush()])
    answering(bomb, "content-type: application/json", "content-encoding: gzip")(connection, backend)


@pytest.mark.parametrize(
    ("answer", "limit"),
    [
        (endless_chunked, f"{MAX_RECEIVED_BYTES} bytes"),
        (gzip_bomb, f"{MAX_DECODED_BYTES} bytes"),
    ],
    ids=["endless-body", "gzip-bomb"],
)
def test_a_body_past_the_limits_is_502_naming_the_limit_and_memory_stays_bounded(
    answer: Answer, limit: str, tmp_path: Path
) -> None:
    with (
        HostileBackend(answer) as backend,
        proxy_mock(backend.origin, tmp_path) as (process, origin, log),
        client(origin) as http,
    ):
        before = memory(process.pid, "VmRSS")
        response = http.get(PRODUCT_PATH)
        grown = memory(process.pid, "VmHWM") - before
        assert response.status_code == 502, response.text[:200]
        assert limit in response.json()["detail"]
        assert grown < MEMORY_BOUND, f"the mock grew by {grown // MIB} MiB"
        assert http.get("/__mock__/health").status_code == 200  # and goes on serving
    assert "Traceback" not in log.read_text()


def test_an_encoded_body_is_passed_on_encoded_and_checked_decoded(tmp_path: Path) -> None:
    good, bad = gzip.compress(json.dumps(PRODUCT).encode()), gzip.compress(json.dumps({**PRODUCT, "msrp": 1}).encode())
    cut_short = good[:-8]  # without its trailer
    bodies = iter([good, bad, cut_short])

    def answer(connection: socket.socket, backend: HostileBackend) -> None:
        answering(next(bodies), "content-type: application/json", "content-encoding: gzip")(connection, backend)

    with (
        HostileBackend(answer) as backend,
        proxy_mock(backend.origin, tmp_path) as (_, origin, _log),
        client(origin) as http,
    ):
        for sent in (good, bad, cut_short):
            with http.stream("GET", PRODUCT_PATH, headers={"Accept-Encoding": "gzip"}) as response:
                assert response.headers["content-encoding"] == "gzip"
                assert b"".join(response.iter_raw()) == sent  # the backend's bytes, not re-encoded
        violations = http.get("/__mock__/violations").json()
    assert [violation["message"] for violation in violations] == [
        'status 200 body: msrp: 1 is not of type "string"',
        "the status 200 body is not valid gzip: the stream is cut short",
    ]


DEEP = b"[" * 100_000 + b"]" * 100_000


def test_a_backend_body_nested_100000_deep_is_passed_on_and_reported(tmp_path: Path) -> None:
    with (
        HostileBackend(answering(DEEP, "content-type: application/json")) as backend,
        proxy_mock(backend.origin, tmp_path) as (_, origin, log),
        client(origin) as http,
    ):
        response = http.get(PRODUCT_PATH)
        assert (response.status_code, response.content) == (200, DEEP)
        violations = http.get("/__mock__/violations").json()
        assert [(v["part"], v["status"]) for v in violations] == [("response", 200)]
        assert "nested too deeply" in violations[0]["message"]
    assert "Traceback" not in log.read_text()


def test_a_request_body_nested_100000_deep_is_forwarded_and_reported(tmp_path: Path) -> None:
    refused = json.dumps({"type": "about:blank", "title": "Bad Request", "status": 400, "detail": "too deep"})
    answer = answering(refused.encode(), "content-type: application/problem+json", status="400 Bad Request")
    with (
        HostileBackend(answer) as backend,
        proxy_mock(backend.origin, tmp_path) as (_, origin, log),
        client(origin) as http,
    ):
        response = http.post(f"{BACKEND}/productlines/", content=DEEP, headers={"Content-Type": "application/json"})
        assert (response.status_code, response.json()["detail"]) == (400, "too deep")  # the backend's answer
        assert backend.requests[0].endswith(DEEP)
        violations = http.get("/__mock__/violations").json()
        assert [v["part"] for v in violations] == ["request"] and "nested too deeply" in violations[0]["message"]
    assert "Traceback" not in log.read_text()


def test_a_violation_quotes_a_huge_value_cut_in_the_report_the_journal_and_the_log(tmp_path: Path) -> None:
    huge = json.dumps({**PRODUCT, "productname": "x" * (2 * MIB)}).encode()
    with (
        HostileBackend(answering(huge, "content-type: application/json")) as backend,
        proxy_mock(backend.origin, tmp_path) as (_, origin, log),
        client(origin) as http,
    ):
        for _ in range(20):
            assert http.get(PRODUCT_PATH).content == huge  # passed on whole
        violations = http.get("/__mock__/violations")
        journal = http.get("/__mock__/requests")
    bound = MESSAGE_CHARS + 100
    assert len(violations.json()) == 20 and len(violations.content) < 20 * 2 * bound
    assert all("productname" in v["message"] and len(v["message"]) < bound for v in violations.json())
    assert all("longer than" in v["message"] for v in violations.json())  # the rule broken, after the cut
    entries = journal.json()
    assert len(entries) == 20 and len(journal.content) < 20 * 16 * 1024
    assert all(len(entry["violations"]) == 1 and len(entry["violations"][0]) < bound for entry in entries)
    lines = [line for line in log.read_text().splitlines() if "spec violation" in line]
    assert len(lines) == 20 and all("productname" in line and len(line) < bound + 200 for line in lines)


def test_a_violation_of_a_request_with_a_long_path_keeps_and_logs_the_path_cut(tmp_path: Path) -> None:
    path = f"{BACKEND}/products/{'c' * 20_000}/"
    with (
        HostileBackend(answering(b"", status="501 Not Implemented")) as backend,
        proxy_mock(backend.origin, tmp_path) as (_, origin, log),
        client(origin) as http,
    ):
        assert http.get(path).status_code == 501
        violations = http.get("/__mock__/violations").json()
        assert http.get("/__mock__/requests").json()[-1]["path"] == path  # the journal: the request as it came
    assert [v["operationId"] for v in violations] == ["get_product"]
    assert (
        violations[0]["path"].startswith(f"{BACKEND}/products/ccc") and len(violations[0]["path"]) < 2 * MESSAGE_CHARS
    )
    lines = [line for line in log.read_text().splitlines() if "spec violation" in line]
    assert len(lines) == 1 and "status 501 is not declared" in lines[0] and len(lines[0]) < 3 * MESSAGE_CHARS


def test_a_body_breaking_the_spec_everywhere_reports_a_bounded_number_of_violations(tmp_path: Path) -> None:
    # 3 million items, each breaking the schema: listed all, at tens of µs each, they held the mock minutes
    page = json.dumps({"count": 3_000_000, "next": None, "previous": None, "results": [1] * 3_000_000}).encode()
    with (
        HostileBackend(answering(page, "content-type: application/json")) as backend,
        proxy_mock(backend.origin, tmp_path) as (_, origin, log),
        client(origin) as http,
    ):
        assert http.get(f"{BACKEND}/products/").content == page
        violations = [v["message"] for v in http.get("/__mock__/violations").json()]
        entry = http.get("/__mock__/requests").json()[-1]
    assert len(violations) == VIOLATIONS_PER_PART + 1 and "not listed" in violations[-1]
    assert entry["violations"] == [f"response: {message}" for message in violations]
    assert len([line for line in log.read_text().splitlines() if "spec violation" in line]) == len(violations)


def test_a_violation_past_the_listed_items_of_a_long_array_is_still_reported(tmp_path: Path) -> None:
    results = [PRODUCT] * 149 + [{**PRODUCT, "msrp": 1}]
    page = json.dumps({"count": 150, "next": None, "previous": None, "results": results}).encode()
    with (
        HostileBackend(answering(page, "content-type: application/json")) as backend,
        proxy_mock(backend.origin, tmp_path) as (_, origin, _log),
        client(origin) as http,
    ):
        assert http.get(f"{BACKEND}/products/").content == page
        violations = [v["message"] for v in http.get("/__mock__/violations").json()]
    assert len(violations) == 2 and violations[0].startswith("status 200 body: results.149.msrp: ")
    assert "listed to their first" in violations[1]
