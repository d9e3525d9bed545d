"""The admin API and the dashboard through a port mapping and behind a proxy that keeps the client's
`Host` (issue 39): loopback literals and the bound address on any port, `--allowed-host` names, and
still no other name and no page of another origin. Real HTTP: the mock over uvicorn, nginx in front."""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from mock_server.app import create_app
from mock_server.arguments import parse_settings
from mock_server.settings import Settings
from tests.support.live import running
from tests.support.zoo.nginx import nginx_in_front_of
from tests.support.zoo.tls import make_certificates

TOKEN = "platform-token"
AUTHORIZED = {"Authorization": f"Bearer {TOKEN}"}
PROXY_NAME = "mock.platform.example"


@pytest.fixture(scope="module")
def origin() -> Iterator[str]:
    """A mock with a token and one allowed proxy name, over uvicorn."""
    with running(create_app(Settings(admin_token=TOKEN, allowed_hosts=(PROXY_NAME,)))) as served:
        yield served


@pytest.mark.parametrize(
    ("host", "page"),
    [
        ("127.0.0.1:9000", "http://127.0.0.1:9000"),
        ("localhost:8080", "http://localhost:8080"),
        ("[::1]:9000", "http://[::1]:9000"),
        ("127.0.0.1", "http://127.0.0.1:80"),
        (f"{PROXY_NAME}:443", f"https://{PROXY_NAME}"),  # TLS ends at the proxy: the mock sees http
        (PROXY_NAME.upper(), f"http://{PROXY_NAME}"),
    ],
)
def test_a_mapped_port_or_an_allowed_name_reaches_the_admin_api_and_the_dashboard(
    origin: str, host: str, page: str
) -> None:
    """What `-p 9000:8000`, compose's "8080:8000" or an ingress named with --allowed-host send."""
    with httpx.Client(base_url=origin, timeout=10, headers={"Host": host}) as client:
        assert client.get("/__mock__/health", headers=AUTHORIZED).status_code == 200
        assert client.get("/__mock__/ui/").status_code == 200  # the page's files need no token
        assert client.get("/__mock__/health").status_code == 401
        own = client.delete("/__mock__/faults", headers={**AUTHORIZED, "Origin": page})
        assert own.status_code == 204, own.text


@pytest.mark.parametrize(
    ("host", "origin_header"),
    [
        ("rebound.example:{port}", None),  # a DNS name rebound to 127.0.0.1
        ("127.0.0.1.rebound.example:9000", None),
        ("other.platform.example:9000", None),  # not the allowed name
        ("127.0.0.1:9000", "http://127.0.0.1:9001"),  # a page on another port is another origin
        ("127.0.0.1:9000", "http://evil.example"),
        (f"{PROXY_NAME}:443", "https://evil.example"),
        ("127.0.0.1:9000", "null"),
    ],
)
def test_other_names_and_other_origins_are_still_refused(origin: str, host: str, origin_header: str | None) -> None:
    port = origin.rpartition(":")[2]
    headers = {**AUTHORIZED, "Host": host.replace("{port}", port)}
    if origin_header:
        headers["Origin"] = origin_header
    with httpx.Client(base_url=origin, timeout=10) as client:
        for method, path in (("GET", "/__mock__/health"), ("DELETE", "/__mock__/faults"), ("GET", "/__mock__/ui/")):
            response = client.request(method, path, headers=headers)
            assert response.status_code == 403, (method, path, response.status_code)


def test_allowed_hosts_come_from_the_command_line_or_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    given = ["--allowed-host", "a.example", "--allowed-host", "b.example:8443"]
    assert parse_settings(given).allowed_hosts == ("a.example", "b.example:8443")
    monkeypatch.setenv("SHOP_MOCK_ALLOWED_HOST", "c.example, d.example")
    assert parse_settings([]).allowed_hosts == ("c.example", "d.example")
    with pytest.raises(SystemExit):
        parse_settings(["--allowed-host", "http://a.example/"])


def test_behind_nginx_keeping_the_host_the_admin_api_needs_the_token_and_refuses_other_pages(tmp_path: Path) -> None:
    """nginx passes the client's Host (no rewrite): its own port, or the allowed name."""
    certificates = make_certificates(tmp_path)
    trust = ssl.create_default_context(cafile=certificates.ca)
    app = create_app(Settings(admin_token=TOKEN, allowed_hosts=(PROXY_NAME,)))
    with (
        running(app) as upstream,
        nginx_in_front_of(upstream, certificates, tmp_path) as proxied,
        httpx.Client(base_url=proxied, timeout=10, verify=trust) as client,
    ):
        assert client.get("/__mock__/health", headers=AUTHORIZED).status_code == 200
        assert client.get("/__mock__/ui/").status_code == 200
        assert client.get("/__mock__/health").status_code == 401
        own = client.delete("/__mock__/faults", headers={**AUTHORIZED, "Origin": proxied})
        assert own.status_code == 204, own.text
        foreign = client.delete("/__mock__/faults", headers={**AUTHORIZED, "Origin": "https://evil.example"})
        assert foreign.status_code == 403
        named = {**AUTHORIZED, "Host": f"{PROXY_NAME}:{proxied.rpartition(':')[2]}"}
        assert client.get("/__mock__/health", headers=named).status_code == 200
        rebound = {**AUTHORIZED, "Host": "rebound.example"}
        assert client.get("/__mock__/health", headers=rebound).status_code == 403
