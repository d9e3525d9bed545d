"""`GET /`: an HTML page whose every link leads somewhere the mock serves."""

from __future__ import annotations

import re

import httpx


def test_the_landing_page_links_what_the_mock_serves_and_the_credentials(api: httpx.Client) -> None:
    page = api.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    links = re.findall(r'href="([^"]+)"', page.text)
    for expected in ("/shop/api/v1/ui/", "/customers/v1/customers/", "/realms/shop/.well-known/openid-configuration"):
        assert expected in links
    assert any(link.startswith("/__mock__/") for link in links)
    for link in links:
        status = api.get(link).status_code
        assert status == 200 or (link.startswith("/customers/v1/") and status == 401), (link, status)
    for credential in ("dev-api-key", "shop-dev-secret", "shop-password"):
        assert credential in page.text
