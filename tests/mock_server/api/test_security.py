"""Credentials: API keys, the dev identity realm, and every kind of token that must be refused."""

from __future__ import annotations

import time
from typing import Any

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from contract_tests.client.auth import forged_tokens as suite_forgeries
from mock_server.api.security import ApiKeys
from mock_server.app import MockApp, create_app
from mock_server.settings import Settings
from tests.conftest import BACKEND, GATEWAY, TOKEN_PATH, fetch_token
from tests.support.live import running

REALM = "/realms/shop"


def anonymous(api: httpx.Client) -> httpx.Client:
    api.headers.pop("X-API-Key", None)
    return api


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def claims(app: MockApp, **overrides: Any) -> dict[str, Any]:
    now = int(time.time())
    return {"iss": app.realm.issuer, "sub": "someone", "typ": "Bearer", "iat": now, "exp": now + 300, **overrides}


def test_discovery_points_at_the_realms_endpoints(api: httpx.Client) -> None:
    config = api.get(f"{REALM}/.well-known/openid-configuration").json()
    assert config["issuer"] == "http://127.0.0.1:8000/realms/shop"  # fixed: the default bind's URL
    realm_url = f"{api.base_url}".rstrip("/") + REALM  # the endpoints: where this client reached the realm
    assert config["token_endpoint"] == f"{realm_url}/protocol/openid-connect/token"
    assert config["jwks_uri"] == f"{realm_url}/protocol/openid-connect/certs"
    assert api.get(config["jwks_uri"]).status_code == 200


def test_a_client_credentials_token_verifies_against_the_published_jwks(api: httpx.Client) -> None:
    token = fetch_token(api)
    config = api.get(f"{REALM}/.well-known/openid-configuration").json()
    (key,) = api.get(config["jwks_uri"]).json()["keys"]
    assert jwt.get_unverified_header(token)["kid"] == key["kid"]
    decoded = jwt.decode(token, jwt.PyJWK(key).key, algorithms=["RS256"], issuer=config["issuer"], audience="account")
    assert decoded["azp"] == "shop-dev"
    assert anonymous(api).get(f"{BACKEND}/products/", headers=bearer(token)).status_code == 200


def test_the_password_grant_for_the_dev_user(api: httpx.Client) -> None:
    token = fetch_token(api, grant_type="password", username="shop-user", password="shop-password")
    assert jwt.decode(token, options={"verify_signature": False})["preferred_username"] == "shop-user"
    assert anonymous(api).get(f"{GATEWAY}/customers/", headers=bearer(token)).status_code == 200


def test_client_secret_basic_is_accepted(api: httpx.Client) -> None:
    response = api.post(TOKEN_PATH, data={"grant_type": "client_credentials"}, auth=("shop-dev", "shop-dev-secret"))
    assert response.status_code == 200
    assert response.json()["token_type"] == "Bearer"


@pytest.mark.parametrize(
    ("form", "status", "error"),
    [
        (
            {"grant_type": "client_credentials", "client_id": "shop-dev", "client_secret": "x"},
            401,
            "unauthorized_client",
        ),
        ({"grant_type": "client_credentials", "client_id": "other", "client_secret": "x"}, 401, "invalid_client"),
        (
            {"grant_type": "password", "client_id": "shop-dev", "client_secret": "shop-dev-secret", "username": "x"},
            401,
            "invalid_grant",
        ),
        ({"grant_type": "implicit"}, 400, "unsupported_grant_type"),
    ],
)
def test_the_token_endpoint_refuses_bad_requests(
    api: httpx.Client, form: dict[str, str], status: int, error: str
) -> None:
    response = api.post(TOKEN_PATH, data=form)
    assert response.status_code == status
    assert response.json()["error"] == error


def test_an_api_key_alone_is_refused_at_the_gateway_and_accepted_at_the_backend(api: httpx.Client) -> None:
    refused = api.get(f"{GATEWAY}/customers/")
    assert refused.status_code == 401
    assert refused.headers["www-authenticate"].startswith("Bearer")
    assert api.get(f"{BACKEND}/customers/").status_code == 200


def forged_tokens(app: MockApp) -> dict[str, str]:
    """The contract suite's forgeries (alg none, HS256 keyed with the public key, wrong signature,
    expired under another key, garbage), plus those only the realm's own key can make."""
    other_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    public_pem = app.realm.tokens.keys.signing.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    good = claims(app)
    header, _, signature = app.realm.sign(good).split(".")
    tampered = jwt.encode({**good, "sub": "admin"}, other_key, algorithm="RS256").split(".")[1]
    return {
        **suite_forgeries(app.realm.sign(good), public_pem),
        "tampered payload": f"{header}.{tampered}.{signature}",
        "expired, signed by the realm": app.realm.sign(claims(app, exp=int(time.time()) - 10)),
        "wrong issuer": app.realm.sign(claims(app, iss="http://evil.example/realms/shop")),
        "no exp": app.realm.sign({k: v for k, v in good.items() if k != "exp"}),
        "empty": "",
    }


@pytest.mark.parametrize("surface", [BACKEND, GATEWAY])
def test_every_kind_of_invalid_token_is_401_with_a_challenge(app: MockApp, client: httpx.Client, surface: str) -> None:
    anonymous(client)
    for kind, token in forged_tokens(app).items():
        response = client.get(f"{surface}/customers/", headers=bearer(token))
        assert response.status_code == 401, kind
        assert response.headers["www-authenticate"].startswith("Bearer"), kind
        assert response.headers["content-type"] == "application/problem+json", kind


@pytest.mark.parametrize(
    "headers", [{}, {"X-API-Key": "wrong"}, {"X-API-Key": ""}, {"Authorization": "Basic c2hvcDpzaG9w"}]
)
def test_missing_or_unknown_credentials_are_401_with_a_challenge(api: httpx.Client, headers: dict[str, str]) -> None:
    response = anonymous(api).get(f"{BACKEND}/products/", headers=headers)
    assert response.status_code == 401
    assert "www-authenticate" in response.headers


def test_configured_api_keys_replace_the_default() -> None:
    app = create_app(Settings(api_keys=frozenset({"k1", "k2"})))
    with running(app) as origin:
        for key, status in (("k1", 200), ("k2", 200), ("dev-api-key", 401)):
            assert httpx.get(f"{origin}{BACKEND}/products/", headers={"X-API-Key": key}).status_code == status


@pytest.mark.parametrize("given", ["k1", "k2", "k", "k12", "", "K1", "k2 ", "k1k2"])
def test_an_api_key_is_accepted_only_whole_and_exact(given: str) -> None:
    assert ApiKeys(frozenset({"k1", "k2"})).accepts(given) is (given in {"k1", "k2"})


def test_a_token_is_refused_once_it_expires_even_after_a_cached_success() -> None:
    app = create_app(Settings(token_ttl=2))
    with running(app) as origin, httpx.Client(base_url=origin) as http:
        token = fetch_token(http)
        assert http.get(f"{BACKEND}/products/", headers=bearer(token)).status_code == 200
        # Its times are whole seconds: it lives 1 to 2 s. So the wait is read from the token, not assumed.
        time.sleep(max(0.0, jwt.decode(token, options={"verify_signature": False})["exp"] - time.time()) + 0.2)
        assert http.get(f"{BACKEND}/products/", headers=bearer(token)).status_code == 401
