"""The identity realm under hostile input, over real HTTP: no 5xx from the token endpoint, one fixed
issuer, and claims of the wrong type refused on every route (fast path, Connexion, gateway)."""

from __future__ import annotations

import base64
import time
from collections.abc import Iterator
from typing import Any

import httpx
import jwt
import pytest

from mock_server.app import MockApp, create_app
from mock_server.arguments import parse_settings
from mock_server.settings import Settings
from tests.conftest import BACKEND, DEV_CLIENT, GATEWAY, TOKEN_PATH
from tests.support.live import running

KEYCLOAK_ERRORS = {
    "invalid_request",
    "invalid_client",
    "unauthorized_client",
    "invalid_grant",
    "unsupported_grant_type",
}
FORM = "application/x-www-form-urlencoded"


def basic(raw: bytes) -> dict[str, str]:
    return {"Authorization": "Basic " + base64.b64encode(raw).decode()}


HOSTILE_FORMS: dict[str, tuple[bytes, dict[str, str]]] = {
    "not UTF-8": (b"grant_type=client_credentials&client_id=shop-dev\xff\xfe", {}),
    "percent-encoded bytes that are not UTF-8": (b"grant_type=client_credentials&client_id=%ff%fe", {}),
    "a lone surrogate, percent-encoded": (b"grant_type=client_credentials&client_id=%ed%a0%80", {}),
    "non-ASCII client id": ("grant_type=client_credentials&client_id=shöp&client_secret=x".encode(), {}),
    "non-ASCII client secret": ("grant_type=client_credentials&client_id=shop-dev&client_secret=sécret".encode(), {}),
    "non-ASCII username and password": (
        "grant_type=password&client_id=shop-dev&client_secret=shop-dev-secret&username=ü&password=ß€".encode(),
        {},
    ),
    "non-ASCII Basic credentials": (b"grant_type=client_credentials", basic("shöp:sécret".encode())),
    "Basic credentials not UTF-8": (b"grant_type=client_credentials", basic(b"shop-dev:\xff\xfe")),
    "Basic credentials percent-encoded, not UTF-8": (b"grant_type=client_credentials", basic(b"shop-dev:%ff")),
    "Basic credentials not base64": (b"grant_type=client_credentials", {"Authorization": "Basic !!!"}),
    "Basic credentials without a colon": (b"grant_type=client_credentials", basic(b"shop-dev")),
    "a repeated field": (b"grant_type=client_credentials&grant_type=password", {}),
    "an empty body": (b"", {}),
    "a JSON body": (b'{"grant_type": "client_credentials"}', {"Content-Type": "application/json"}),
    "NUL bytes": (b"grant_type=client_credentials&client_id=%00&client_secret=%00", {}),
}


@pytest.fixture(scope="module")
def live() -> Iterator[tuple[MockApp, httpx.Client]]:
    app = create_app(Settings())
    with running(app) as origin, httpx.Client(base_url=origin, timeout=30) as http:
        yield app, http


@pytest.mark.parametrize("case", list(HOSTILE_FORMS))
def test_the_token_endpoint_answers_a_hostile_form_with_a_keycloak_error(
    live: tuple[MockApp, httpx.Client], case: str
) -> None:
    _, http = live
    body, headers = HOSTILE_FORMS[case]
    response = http.post(TOKEN_PATH, content=body, headers={"Content-Type": FORM, **headers})
    assert response.status_code in {400, 401}, response.text
    assert response.json()["error"] in KEYCLOAK_ERRORS
    assert http.post(TOKEN_PATH, data=DEV_CLIENT).status_code == 200  # the realm still works


def test_the_issuer_is_fixed_whatever_the_forwarded_host(live: tuple[MockApp, httpx.Client]) -> None:
    app, http = live
    forged_host = {"X-Forwarded-Host": "attacker.example", "X-Forwarded-Proto": "https"}
    token = http.post(TOKEN_PATH, data=DEV_CLIENT, headers=forged_host).json()["access_token"]
    assert jwt.decode(token, options={"verify_signature": False})["iss"] == app.realm.issuer
    discovery = http.get("/realms/shop/.well-known/openid-configuration", headers=forged_host).json()
    assert discovery["issuer"] == app.realm.issuer == "http://127.0.0.1:8000/realms/shop"
    assert "attacker.example" not in str(discovery)


def test_a_configured_issuer_is_the_only_one_accepted() -> None:
    app = create_app(Settings(issuer="https://sso.example/realms/shop"))
    with running(app) as origin, httpx.Client(base_url=origin, timeout=30) as http:
        token = http.post(TOKEN_PATH, data=DEV_CLIENT).json()["access_token"]
        assert jwt.decode(token, options={"verify_signature": False})["iss"] == "https://sso.example/realms/shop"
        assert http.get(f"{GATEWAY}/customers/", headers=bearer(token)).status_code == 200
        other = app.realm.sign({**well_formed(app), "iss": "http://127.0.0.1:8000/realms/shop"})
        assert http.get(f"{GATEWAY}/customers/", headers=bearer(other)).status_code == 401


def test_verified_tokens_do_not_grow_any_set(live: tuple[MockApp, httpx.Client]) -> None:
    app, http = live
    for number in range(20):
        http.post(TOKEN_PATH, data=DEV_CLIENT, headers={"X-Forwarded-Host": f"host{number}.example"})
        token = app.realm.sign({**well_formed(app), "jti": str(number)})
        assert http.get(f"{BACKEND}/productlines/", headers=bearer(token)).status_code == 200
        foreign = app.realm.sign({**well_formed(app), "iss": f"http://host{number}.example/realms/shop"})
        assert http.get(f"{BACKEND}/productlines/", headers=bearer(foreign)).status_code == 401
    assert len(app.realm.tokens._verified) <= app.realm.tokens.cache_size


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def well_formed(app: MockApp) -> dict[str, Any]:
    now = int(time.time())
    return {"iss": app.realm.issuer, "sub": "someone", "typ": "Bearer", "iat": now, "exp": now + 300, "jti": "x"}


WRONG_TYPES: dict[str, dict[str, Any]] = {
    "exp as a numeric string": {"exp": str(int(time.time()) + 300)},
    "exp as a boolean": {"exp": True},
    "exp as null": {"exp": None},
    "exp as an object": {"exp": {"at": 1}},
    "iat as a numeric string": {"iat": str(int(time.time()))},
    "nbf as a numeric string": {"nbf": "0"},
    "iss as a list": {"iss": ["http://127.0.0.1:8000/realms/shop"]},
    "sub as a number": {"sub": 12},
}


@pytest.fixture(scope="module", params=["fast path", "connexion"])
def routes(request: pytest.FixtureRequest) -> Iterator[tuple[MockApp, httpx.Client]]:
    app = create_app(Settings(fast_path=request.param == "fast path"))
    with running(app) as origin, httpx.Client(base_url=origin, timeout=30) as http:
        yield app, http


@pytest.mark.parametrize("path", [f"{BACKEND}/productlines/", f"{GATEWAY}/customers/"])
def test_claims_of_the_wrong_type_are_401_on_every_route(routes: tuple[MockApp, httpx.Client], path: str) -> None:
    app, http = routes
    assert http.get(path, headers=bearer(app.realm.sign(well_formed(app)))).status_code == 200
    for kind, override in WRONG_TYPES.items():
        response = http.get(path, headers=bearer(app.realm.sign({**well_formed(app), **override})))
        assert response.status_code == 401, kind
        assert response.headers["content-type"] == "application/problem+json", kind
        assert response.headers["www-authenticate"].startswith("Bearer"), kind


def test_the_issuer_option_takes_only_an_http_url(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        parse_settings(["--issuer", "https://sso.example/realms/shop"]).issuer_for("/realms/shop")
        == "https://sso.example/realms/shop"
    )
    assert parse_settings(["--port", "8123"]).issuer_for("/realms/shop") == "http://127.0.0.1:8123/realms/shop"
    assert parse_settings(["--token-ttl", str(2**31 - 1)]).token_ttl == 2**31 - 1
    for ttl in ("0", "-5", str(2**31), "99999999999999999999"):  # 10**20 was a token no JavaScript reads right
        with pytest.raises(SystemExit) as exit_info:
            parse_settings(["--token-ttl", ttl])
        assert exit_info.value.code == 2
        assert f"--token-ttl must be 1 to 2147483647 seconds, not {ttl}" in capsys.readouterr().err
    for wrong, says in (
        ("sso.example", "must be an absolute http(s) URL"),
        ("ftp://sso.example/realms/shop", "must be an absolute http(s) URL"),
        ("https://sso.example/realms/shop?x=1", "must not hold a query or a fragment"),
    ):
        with pytest.raises(SystemExit) as exit_info:
            parse_settings(["--issuer", wrong])
        assert exit_info.value.code == 2
        assert f"--issuer {says}" in capsys.readouterr().err


REALM_ENDPOINTS: list[tuple[str, str, bytes, dict[str, Any]]] = [
    ("GET", "/realms/shop/protocol/openid-connect/auth?client_id=%ff", b"", {}),
    ("GET", "/realms/shop/protocol/openid-connect/auth?client_id=shop-web&client_id=shop-dev", b"", {}),
    ("GET", "/realms/shop/protocol/openid-connect/auth?" + "x=1&" * 5000, b"", {}),
    ("POST", "/realms/shop/login-actions/authenticate", b"username=a", {"Content-Type": FORM}),
    ("POST", "/realms/shop/login-actions/authenticate?tab_id=%ed%a0%80", b"username=\xff", {"Content-Type": FORM}),
    ("POST", "/realms/shop/login-actions/authenticate?tab_id=x", b"\xff\xfe", {"Content-Type": FORM}),
    (
        "GET",
        "/realms/shop/protocol/openid-connect/userinfo",
        b"",
        {"Authorization": "Bearer é".encode()},
    ),
    ("GET", "/realms/shop/protocol/openid-connect/userinfo", b"", {"Authorization": "Bearer a.b.c"}),
    ("POST", "/realms/shop/protocol/openid-connect/userinfo", b"\xff", {"Authorization": "Bearer"}),
    ("GET", "/realms/shop/protocol/openid-connect/logout?id_token_hint=%ff", b"", {}),
    (
        "GET",
        "/realms/shop/protocol/openid-connect/logout?post_logout_redirect_uri=x&post_logout_redirect_uri=y",
        b"",
        {},
    ),
    ("POST", "/realms/shop/protocol/openid-connect/logout", b"refresh_token=x&client_id=%00", {"Content-Type": FORM}),
    ("POST", "/realms/shop/protocol/openid-connect/logout", b"refresh_token=x", {"Authorization": "Basic ###"}),
]


@pytest.mark.parametrize(("method", "path", "body", "headers"), REALM_ENDPOINTS)
def test_every_realm_endpoint_answers_hostile_input_with_a_4xx(
    live: tuple[MockApp, httpx.Client], method: str, path: str, body: bytes, headers: dict[str, Any]
) -> None:
    _, http = live
    response = http.request(method, path, content=body, headers=headers)
    assert 400 <= response.status_code < 500, response.text
