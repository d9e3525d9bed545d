"""A spec path sent without its trailing slash is redirected to the one with it (http/middleware.py,
`SlashRedirect`): at the origin the client called, behind a proxy too, with the path as sent and the
query kept; any other path is left alone. Real HTTP: the mock over uvicorn."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from mock_server.app import create_app
from mock_server.settings import Settings
from tests.conftest import API_KEY_HEADERS, BACKEND, GATEWAY
from tests.support.live import running

PROXIED = {"Host": "mock:8000", "X-Forwarded-Host": "shop.example:8443", "X-Forwarded-Proto": "https"}
"""What nginx sends by default with `X-Forwarded-*` added: its upstream's name as the Host."""


@pytest.fixture(scope="module")
def http() -> Iterator[httpx.Client]:
    with running(create_app(Settings())) as origin, httpx.Client(base_url=origin, headers=API_KEY_HEADERS) as client:
        yield client


@pytest.mark.parametrize(
    ("sent", "location"),
    [
        (f"{BACKEND}/productlines", f"{BACKEND}/productlines/"),
        (f"{BACKEND}/products?page=2&page_size=5", f"{BACKEND}/products/?page=2&page_size=5"),
        (f"{BACKEND}/productlines/Slash%2FLine", f"{BACKEND}/productlines/Slash%2FLine/"),
        (f"{BACKEND}/productlines/line%0Abreak", f"{BACKEND}/productlines/line%0Abreak/"),
        (f"{BACKEND}/customers/103/orders", f"{BACKEND}/customers/103/orders/"),
        (f"{GATEWAY}/customers/103", f"{GATEWAY}/customers/103/"),
    ],
)
def test_a_path_without_its_slash_is_redirected_to_the_origin_the_client_called(
    http: httpx.Client, sent: str, location: str
) -> None:
    direct = http.get(sent)
    assert direct.status_code == 307 and direct.headers["location"] == f"{http.base_url}".rstrip("/") + location
    proxied = http.get(sent, headers=PROXIED)
    assert proxied.status_code == 307 and proxied.headers["location"] == f"https://shop.example:8443{location}"
    assert http.post(sent, json={}).status_code == 307  # every method, its body kept by the client


@pytest.mark.parametrize("path", [f"{BACKEND}/nothing", f"{BACKEND}/productlines/a/b/c", "/realms/shop/nothing"])
def test_a_path_the_spec_does_not_have_is_not_redirected(http: httpx.Client, path: str) -> None:
    answer = http.get(path, headers=PROXIED)
    assert answer.status_code == 404 and "location" not in answer.headers
