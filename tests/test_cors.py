"""CORS for browser front ends: any origin by default, configurable, preflight answered."""

from __future__ import annotations

import httpx

from mock_server.app import create_app
from mock_server.settings import Settings
from tests.conftest import BACKEND
from tests.live import running

PREFLIGHT = {
    "Origin": "http://localhost:5173",
    "Access-Control-Request-Method": "POST",
    "Access-Control-Request-Headers": "content-type, x-api-key, authorization",
}


def test_a_preflight_is_answered_for_any_origin(api: httpx.Client) -> None:
    response = api.options(f"{BACKEND}/products/", headers=PREFLIGHT)
    assert response.status_code == 200
    assert response.headers["access-control-allow-origin"] == "*"
    assert "POST" in response.headers["access-control-allow-methods"]
    assert "x-api-key" in response.headers["access-control-allow-headers"].lower()
    assert "access-control-allow-credentials" not in response.headers


def test_errors_carry_cors_headers_too(api: httpx.Client) -> None:
    api.headers.pop("X-API-Key")
    response = api.get(f"{BACKEND}/products/", headers={"Origin": "http://localhost:5173"})
    assert response.status_code == 401
    assert response.headers["access-control-allow-origin"] == "*"
    assert "WWW-Authenticate" in response.headers["access-control-expose-headers"]


def test_configured_origins_are_the_only_ones_allowed() -> None:
    app = create_app(Settings(cors_origins=("http://app.example",)))
    with running(app) as origin:
        allowed = httpx.options(f"{origin}{BACKEND}/products/", headers={**PREFLIGHT, "Origin": "http://app.example"})
        refused = httpx.options(f"{origin}{BACKEND}/products/", headers=PREFLIGHT)
    assert allowed.headers["access-control-allow-origin"] == "http://app.example"
    assert refused.status_code == 400
