"""The Swagger UI pages: each calls its own surface on any host and port, and can log in by the realm.

Read the way Swagger UI reads them: the page, the spec URL written in it, the spec it loads, its
servers resolved against the page's URL, its OAuth2 flow and the `initOAuth` call.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import urljoin

import httpx
import pytest

from mock_server.control.swagger_ui import BROWSER_CLIENT
from mock_server.settings import DEFAULT_API_KEY
from mock_server.spec.schemas import load_spec
from tests.conftest import BACKEND, DEV_CLIENT, GATEWAY, fetch_token

SURFACES = [BACKEND, GATEWAY]
DISCOVERY = "/realms/shop/.well-known/openid-configuration"
WRITES = ("post", "put", "patch")


def ui_page(api: httpx.Client, prefix: str) -> tuple[str, str]:
    """(the page's absolute URL, its HTML)."""
    page = api.get(f"{prefix}/ui/")
    assert page.status_code == 200
    return str(page.url), page.text


def loaded_spec(api: httpx.Client, prefix: str, **headers: str) -> tuple[str, dict[str, Any]]:
    """(the spec's absolute URL, the spec) that the page at `{prefix}/ui/` loads."""
    page_url, html = ui_page(api, prefix)
    (spec_url,) = re.findall(r'url: "([^"]+)"', html)
    spec_url = urljoin(page_url, spec_url)
    response = api.get(spec_url, headers=headers)
    assert response.status_code == 200
    return spec_url, response.json()


def operations(spec: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (method, path, operation)
        for path, item in spec["paths"].items()
        for method, operation in item.items()
        if isinstance(operation, dict) and "operationId" in operation
    ]


def example_path(spec: dict[str, Any], path: str) -> str:
    """`path` with each path parameter's example, as a user of "Try it out" would fill it in."""
    parameters = spec["components"]["parameters"]
    return re.sub(r"\{(\w+)\}", lambda m: str(parameters[m.group(1)]["example"]).replace(" ", "%20"), path)


@pytest.mark.parametrize("prefix", SURFACES)
def test_each_page_loads_a_spec_whose_only_server_is_its_own_surface(api: httpx.Client, prefix: str) -> None:
    spec_url, spec = loaded_spec(api, prefix)
    assert [urljoin(spec_url, server["url"]) for server in spec["servers"]] == [urljoin(spec_url, prefix)]
    assert [path for path, item in spec["paths"].items() if "servers" in item] == []
    contract = load_spec()["paths"]
    expected = [p for p, item in contract.items() if prefix == BACKEND or "servers" in item]
    assert list(spec["paths"]) == expected


@pytest.mark.parametrize("prefix", SURFACES)
def test_try_it_out_reaches_every_operation_on_the_page_host_and_port(app: Any, live_origin: str, prefix: str) -> None:
    with httpx.Client(base_url=live_origin, timeout=30) as browser:
        spec_url, spec = loaded_spec(browser, prefix)
        credentials = (
            {"X-API-Key": DEFAULT_API_KEY}
            if prefix == BACKEND
            else {"Authorization": f"Bearer {fetch_token(browser, **DEV_CLIENT)}"}
        )
        server = urljoin(spec_url, spec["servers"][0]["url"])
        assert server.startswith(live_origin)  # the random port, not the spec's default
        for method, path, _ in operations(spec):
            url = server + example_path(spec, path)
            response = browser.request(method, url, headers=credentials, json={} if method in WRITES else None)
            # reached: the operation answered (a 400 for the empty body, a 409 for a delete with dependants)
            assert response.status_code in (200, 400, 409), (method, url, response.text)


@pytest.mark.parametrize("prefix", SURFACES)
def test_the_authorize_dialog_logs_in_through_the_realm_with_pkce(api: httpx.Client, prefix: str) -> None:
    _, spec = loaded_spec(api, prefix)
    realm = api.get(DISCOVERY).json()
    schemes = spec["components"]["securitySchemes"]
    oauth2 = [scheme for scheme in schemes.values() if scheme["type"] == "oauth2"]
    assert len(oauth2) == 1
    flow = oauth2[0]["flows"]["authorizationCode"]
    assert flow["authorizationUrl"] == realm["authorization_endpoint"]
    assert flow["tokenUrl"] == realm["token_endpoint"]
    oauth2_name = next(name for name, scheme in schemes.items() if scheme["type"] == "oauth2")
    for method, path, operation in operations(spec):
        assert {oauth2_name: []} in operation["security"], (method, path)

    page_url, html = ui_page(api, prefix)
    (init,) = re.findall(r"ui\.initOAuth\(\s*(\{.*?\})\s*\)", html, re.DOTALL)
    assert json.loads(init) == {
        "clientId": BROWSER_CLIENT,
        "usePkceWithAuthorizationCodeGrant": True,
        "scopes": "openid",
    }
    redirect = api.get(urljoin(page_url, "oauth2-redirect.html"))  # Swagger UI's default redirect_uri
    assert redirect.status_code == 200 and "swaggerUIRedirectOauth2" in redirect.text


def test_the_login_urls_follow_the_host_the_page_was_loaded_from(api: httpx.Client) -> None:
    proxy = {"X-Forwarded-Host": "shop.example:8443", "X-Forwarded-Proto": "https"}
    _, spec = loaded_spec(api, BACKEND, **proxy)
    flow = spec["components"]["securitySchemes"]["OAuth2"]["flows"]["authorizationCode"]
    assert flow["authorizationUrl"].startswith("https://shop.example:8443/realms/shop/")
    assert flow["tokenUrl"].startswith("https://shop.example:8443/realms/shop/")


def test_the_api_key_scheme_names_the_dev_key(api: httpx.Client) -> None:
    _, spec = loaded_spec(api, BACKEND)
    (api_key,) = [scheme for scheme in spec["components"]["securitySchemes"].values() if scheme["type"] == "apiKey"]
    assert DEFAULT_API_KEY in api_key["description"]


@pytest.mark.parametrize("prefix", SURFACES)
def test_the_authorize_dialog_offers_exactly_the_schemes_the_surface_takes(api: httpx.Client, prefix: str) -> None:
    _, spec = loaded_spec(api, prefix)
    required = {name for _, _, operation in operations(spec) for option in operation["security"] for name in option}
    assert set(spec["components"]["securitySchemes"]) == required
    api_key = next(name for name, scheme in load_spec()["components"]["securitySchemes"].items() if "in" in scheme)
    assert (api_key in required) == (prefix == BACKEND)


@pytest.mark.parametrize("prefix", SURFACES)
def test_the_contract_served_beside_the_ui_is_not_changed(api: httpx.Client, prefix: str) -> None:
    contract = api.get(f"{prefix}/openapi.json").json()
    assert contract["components"]["securitySchemes"] == load_spec()["components"]["securitySchemes"]
