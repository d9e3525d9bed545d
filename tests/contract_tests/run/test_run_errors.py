"""A part of a run that could not complete is a failing verdict with its cause: exit 2, one stderr line naming
the cause class and the first request it happened on, every error in findings.json with its cause.

Causes are told from the exception types both HTTP clients raise (httpx for the domain tests, requests for
Schemathesis), against tiny real servers on a loopback port that misbehave one way each.
"""

from __future__ import annotations

import contextlib
import re
import socket
import struct
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import requests

from contract_tests import cli
from contract_tests.client.causes import classify, request_of
from contract_tests.outcome.findings import Ledger, RunError, Violation
from mock_server.app import create_app
from mock_server.settings import Settings
from tests.support.live import running
from tests.support.ports import free_port
from tests.support.suite import credentials, shop_contract

API = "/shop/api/v1"
LINGER_ZERO = struct.pack("ii", 1, 0)
"""SO_LINGER on, 0 s: close() sends RST instead of FIN."""


def reset(conn: socket.socket) -> None:
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, LINGER_ZERO)


def not_http(conn: socket.socket) -> None:
    conn.sendall(b"SSH-2.0-OpenSSH_9.6\r\n\r\n")


def plain_http(conn: socket.socket) -> None:
    conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")


@contextlib.contextmanager
def raw_server(behave: Callable[[socket.socket], None]) -> Iterator[int]:
    """A loopback TCP server that reads what a client sends, then `behave`s and closes; yields its port."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            with conn:
                conn.settimeout(2)
                with contextlib.suppress(OSError):
                    conn.recv(65536)
                    behave(conn)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        thread.join(timeout=5)
        listener.close()


def httpx_error(url: str) -> BaseException:
    with httpx.Client(timeout=5) as client, pytest.raises(httpx.HTTPError) as caught:
        client.get(url)
    return caught.value


def requests_error(url: str) -> BaseException:
    with requests.Session() as session, pytest.raises(requests.RequestException) as caught:
        session.get(url, timeout=5)
    return caught.value


@pytest.mark.parametrize("client", [httpx_error, requests_error], ids=["httpx", "requests"])
@pytest.mark.parametrize(
    ("behave", "scheme", "cause"),
    [
        (reset, "http", "connection reset"),
        (not_http, "http", "protocol error"),
        (plain_http, "https", "TLS"),
    ],
    ids=["reset", "not_http", "tls_to_plain_http"],
)
def test_the_cause_is_told_from_the_clients_exception_types(
    client: Callable[[str], BaseException], behave: Callable[[socket.socket], None], scheme: str, cause: str
) -> None:
    with raw_server(behave) as port:
        url = f"{scheme}://127.0.0.1:{port}/shop/api/v1/productlines/x/"
        error = client(url)
    assert classify(error) == cause, repr(error)
    assert request_of(error) == f"GET {url}"


@pytest.mark.parametrize("client", [httpx_error, requests_error], ids=["httpx", "requests"])
def test_a_closed_port_is_connection_refused(client: Callable[[str], BaseException]) -> None:
    url = f"http://127.0.0.1:{free_port()}/shop/api/v1/"
    error = client(url)
    assert classify(error) == "connection refused", repr(error)
    assert request_of(error) == f"GET {url}"


def test_what_is_not_the_network_is_named_by_its_type() -> None:
    assert classify(KeyError("productline")) == "other (KeyError)"
    assert request_of(KeyError("productline")) == ""


def run_error(cause: str, request: str) -> RunError:
    return RunError(cause, "backend", "get_product_line", request, "detail")


def test_errors_make_exit_2_even_with_violations_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    ledger = Ledger(secrets=("s3cret-key",))
    ledger.violated(Violation("round_trip", "backend", "get_product", "rule", "curl", "HTTP 200"))
    first = "GET http://127.0.0.1:1/shop/api/v1/productlines/x/?key=s3cret-key"
    ledger.errors += [run_error("connection reset", first), run_error("timeout", ""), run_error("TLS", "")]
    ledger.errors.append(run_error("connection reset", ""))
    assert cli.verdict(ledger) == 2
    err = capsys.readouterr().err
    assert err.splitlines() == [
        "shop-contract: error: 4 part(s) of the run could not complete; first: connection reset on GET "
        "http://127.0.0.1:1/shop/api/v1/productlines/x/?key=[masked] (and 3 more of 3 cause(s): "
        "connection reset 2, timeout 1, TLS 1; see Errors above)"
    ]


class Resetting:
    """The mock, with every GET of one product line answered by a TCP reset (RST), as a crashing worker or
    a proxy dropping the connection does; every other request goes to the mock."""

    def __init__(self) -> None:
        self.app = create_app(Settings())

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        line = re.fullmatch(f"{API}/productlines/[^/]+/", scope.get("path", ""))
        if scope["type"] == "http" and scope["method"] == "GET" and line:
            transport = send.__self__.transport  # uvicorn's connection: the transport behind its `send`
            transport.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, LINGER_ZERO)
            transport.abort()
            return
        await self.app(scope, receive, send)


@pytest.mark.parametrize("part", ["--no-domain", "--no-conformance"], ids=["schemathesis", "domain"])
def test_a_target_resetting_one_operation_is_exit_2_naming_the_cause_and_request(part: str, tmp_path: Path) -> None:
    with running(Resetting()) as origin:
        args = ["--base-url", origin + API, *credentials(origin), "--seed", "3", "--profile", "fast", "--quiet"]
        outcome = shop_contract([*args, "--include", "get_product_line", part], tmp_path)
    assert outcome.code == 2, outcome.stdout[-3000:] + outcome.stderr
    assert len(outcome.stderr.strip().splitlines()) == 1, outcome.stderr
    line = re.escape(f"GET {origin}{API}/productlines/")
    assert re.fullmatch(
        rf"shop-contract: error: \d+ part\(s\) of the run could not complete; first: connection reset on {line}\S+ "
        r"\((and \d+ more of 1 cause\(s\): connection reset \d+; )?see Errors above\)\n",
        outcome.stderr,
    ), outcome.stderr
    errors = outcome.findings["errors"]
    assert errors and all(error["cause"] == "connection reset" for error in errors), errors
    assert all(error["request"].startswith(f"GET {origin}{API}/productlines/") for error in errors), errors
    summary = (tmp_path / "summary.txt").read_text(encoding="utf-8")
    assert f"by cause:\n  connection reset ({len(errors)}):\n    [backend] " in summary
    assert f"Result: incomplete, {len(errors)} part(s) could not complete (see Errors);" in summary
