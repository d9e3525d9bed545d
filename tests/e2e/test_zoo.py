"""The suite against a zoo of real servers (tests/support/zoo): each a process on a loopback port, each the
same verdict.

Every correct target passes the fast profile with no violation and no part of the run left
incomplete, whatever the server in front: gunicorn's gthread workers for the DRF backend; uvicorn
and hypercorn for the mock; nginx terminating TLS with a CA the test makes; an HTTP/1.0 server whose
bodies end at EOF. Under gunicorn's sync workers (`Connection: close` after every response), the
correct backend (ignoring letter case), the realistic one and every variant run with three seeds in
tests/e2e/drf/test_suite.py (tox -e drf).
"""

from __future__ import annotations

import socket
import ssl
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from mock_server.app import create_app
from mock_server.settings import Settings
from tests.e2e.drf.test_suite import contract
from tests.support.drf import API_KEY
from tests.support.drf.server import serve
from tests.support.live import running
from tests.support.ports import free_port
from tests.support.suite import Outcome, credentials, shop_contract
from tests.support.zoo.http10 import http10_in_front_of
from tests.support.zoo.mock import mock_under
from tests.support.zoo.nginx import nginx_in_front_of
from tests.support.zoo.tls import make_certificates

SEED = 101
FAST = ("--profile", "fast", "--seed", str(SEED))


@pytest.fixture(scope="module")
def realm() -> Iterator[str]:
    """A mock whose realm issues the tokens the DRF backend verifies."""
    port = free_port()
    with running(create_app(Settings(port=port)), port=port) as origin:
        yield origin


def against_mock(origin: str, tmp_path: Path, *args: str) -> Outcome:
    surfaces = ["--base-url", f"{origin}/shop/api/v1", "--gateway-url", f"{origin}/customers/v1"]
    return shop_contract([*surfaces, *credentials(origin), "--quiet", *FAST, *args], tmp_path / "report")


def assert_passes(outcome: Outcome) -> None:
    """The verdict of a correct target: exit 0, no violation, nothing that could not complete."""
    shown = outcome.stdout[-6000:] + outcome.stderr
    assert outcome.findings.get("errors") == [], shown
    assert outcome.findings.get("violations") == [], shown
    assert outcome.code == 0, shown


def raw_get(origin: str, path: str) -> tuple[str, dict[str, str]]:
    """The status line and headers of a GET sent by hand, once the server has closed the connection
    (a server that kept it open would fail the read's timeout instead)."""
    address = urlsplit(origin)
    with socket.create_connection((address.hostname, address.port or 80), timeout=10) as sock:
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: {address.netloc}\r\nX-API-Key: {API_KEY}\r\n\r\n".encode())
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    status, *lines = received.partition(b"\r\n\r\n")[0].decode("latin-1").split("\r\n")
    return status, {name.lower(): value.strip() for name, _, value in (line.partition(":") for line in lines)}


@pytest.mark.e2e
def test_correct_drf_backend_under_gunicorn_gthread_passes_the_fast_profile(realm: str, tmp_path: Path) -> None:
    """Threads keep the connection open (under sync workers, which close it after every response, the
    correct backend, ignoring letter case, passes the default profile with three seeds: tox -e drf)."""
    with serve("correct", realm_url=f"{realm}/realms/shop", server="gunicorn-gthread") as origin:
        answer = httpx.get(f"{origin}/shop/api/v1/products/", headers={"X-API-Key": API_KEY})
        assert answer.headers["server"].startswith("gunicorn")
        assert answer.headers.get("connection") != "close"
        assert_passes(contract(origin, realm, tmp_path, *FAST))


def test_an_unknown_server_is_refused_naming_the_servers(realm: str) -> None:
    refused = pytest.raises(ValueError, match=r"unknown server 'gunicorn': one of uvicorn, gunicorn-sync")
    with refused, serve("correct", realm_url=f"{realm}/realms/shop", server="gunicorn"):
        pass


@pytest.mark.e2e
@pytest.mark.parametrize("server", ["uvicorn", "hypercorn"])
def test_the_mock_as_a_process_passes_the_fast_profile(tmp_path: Path, server: str) -> None:
    with mock_under(server, tmp_path) as origin:
        assert httpx.get(f"{origin}/__mock__/health").headers["server"].startswith(server)
        assert_passes(against_mock(origin, tmp_path))


@pytest.mark.e2e
def test_the_mock_behind_nginx_terminating_tls_passes_the_fast_profile(tmp_path: Path) -> None:
    """The suite trusts the test's own CA; the mock's page links come back as https on nginx's address."""
    certificates = make_certificates(tmp_path)
    with mock_under("uvicorn", tmp_path) as upstream, nginx_in_front_of(upstream, certificates, tmp_path) as origin:
        trust = ssl.create_default_context(cafile=certificates.ca)
        page = httpx.get(f"{origin}/shop/api/v1/products/", headers={"X-API-Key": API_KEY}, verify=trust)
        assert page.headers["server"].startswith("nginx")
        assert page.json()["next"].startswith(f"{origin}/shop/api/v1/products/")
        assert_passes(against_mock(origin, tmp_path, "--ca-bundle", str(certificates.ca)))


@pytest.mark.e2e
def test_the_mock_behind_an_http10_server_passes_the_fast_profile(tmp_path: Path) -> None:
    with mock_under("uvicorn", tmp_path) as upstream, http10_in_front_of(upstream, tmp_path) as origin:
        status, headers = raw_get(origin, "/shop/api/v1/products/")
        assert status == "HTTP/1.0 200 OK" and "content-length" not in headers, (status, headers)
        assert_passes(against_mock(origin, tmp_path))
