"""The dev realm's OpenID Connect flows over real HTTP, as a front end runs them, and every error
named as Keycloak names it."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from html import unescape
from typing import Any

import httpx
import jwt
import pytest

from mock_server.app import MockApp, create_app
from mock_server.realm.tokens import half_hash
from mock_server.settings import Settings
from tests.conftest import BACKEND, DEV_CLIENT, GATEWAY, TOKEN_PATH
from tests.support.live import TRUSTED, running
from tests.support.realm_login import AUTH_PATH, CALLBACK, REALM, Authorization, form_action, log_in, redirect_params

USERINFO = f"{REALM}/protocol/openid-connect/userinfo"
LOGOUT = f"{REALM}/protocol/openid-connect/logout"


@pytest.fixture(scope="module")
def live() -> Iterator[tuple[MockApp, str]]:
    app = create_app(Settings())
    with running(app) as origin:
        yield app, origin


@pytest.fixture
def browser(live: tuple[MockApp, str]) -> Iterator[httpx.Client]:
    """A fresh 'browser': its own cookie jar, redirects not followed (the test reads them)."""
    with httpx.Client(base_url=live[1], timeout=30, follow_redirects=False, verify=TRUSTED) as client:
        yield client


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def verified(http: httpx.Client, token: str, audience: str) -> dict[str, Any]:
    """The token's claims, checked against the realm's published JWKS and issuer."""
    config = http.get(f"{REALM}/.well-known/openid-configuration").json()
    keys = jwt.PyJWKClient(config["jwks_uri"]).get_signing_key_from_jwt(token)
    claims: dict[str, Any] = jwt.decode(
        token, keys.key, algorithms=["RS256"], issuer=config["issuer"], audience=audience
    )
    return claims


def code_tokens(browser: httpx.Client, authorization: Authorization | None = None) -> dict[str, Any]:
    authorization = authorization or Authorization()
    code = log_in(browser, authorization)["code"]
    response = browser.post(TOKEN_PATH, data=authorization.token_form(code))
    assert response.status_code == 200, response.text
    tokens: dict[str, Any] = response.json()
    return tokens


def confirm_form(html: str) -> tuple[str, str]:
    """The logout confirmation form's action and its `session_code`."""
    action = re.search(r'<form action="([^"]+)"', html)
    code = re.search(r'name="session_code" value="([^"]+)"', html)
    assert action and code, html
    return unescape(action.group(1)), unescape(code.group(1))


def assert_error(response: httpx.Response, status: int, error: str, description: str | None = None) -> None:
    assert response.status_code == status, response.text
    assert response.json()["error"] == error
    if description is not None:
        assert response.json()["error_description"] == description


# the authorization code flow


def test_the_code_flow_with_pkce_gives_keycloak_shaped_tokens(browser: httpx.Client) -> None:
    authorization = Authorization()
    redirect = log_in(browser, authorization)
    assert redirect["state"] == authorization.state
    assert redirect["iss"] == "http://127.0.0.1:8000/realms/shop"
    response = browser.post(TOKEN_PATH, data=authorization.token_form(redirect["code"]))
    assert response.status_code == 200, response.text
    assert response.headers["cache-control"] == "no-store"
    tokens = response.json()
    assert tokens["token_type"] == "Bearer"
    assert (tokens["expires_in"], tokens["refresh_expires_in"]) == (300, 1800)
    assert tokens["session_state"] == redirect["session_state"]
    assert set(tokens["scope"].split()) == {"openid", "profile", "email"}
    id_claims = verified(browser, tokens["id_token"], audience="shop-web")
    assert id_claims["nonce"] == authorization.nonce
    assert id_claims["at_hash"] == half_hash(tokens["access_token"])
    assert id_claims["typ"] == "ID"
    assert id_claims["preferred_username"] == "shop-user"
    access = verified(browser, tokens["access_token"], audience="account")
    assert {"shop-user", "default-roles-shop", "offline_access"} <= set(access["realm_access"]["roles"])
    assert access["azp"] == "shop-web"
    assert access["exp"] - access["iat"] == 300
    assert access["sid"] == id_claims["sid"] == redirect["session_state"]
    for path in (f"{BACKEND}/productlines/", f"{GATEWAY}/customers/"):
        assert browser.get(path, headers=bearer(tokens["access_token"])).status_code == 200


def test_the_fragment_response_mode_puts_the_code_in_the_fragment(browser: httpx.Client) -> None:
    page = browser.get(AUTH_PATH, params=Authorization().params(response_mode="fragment"))
    answer = browser.post(form_action(page.text), data={"username": "shop-user", "password": "shop-password"})
    assert answer.headers["location"].startswith(f"{CALLBACK}#code=")


def test_a_wrong_password_shows_the_form_again_and_the_right_one_then_passes(browser: httpx.Client) -> None:
    authorization = Authorization()
    page = browser.get(AUTH_PATH, params=authorization.params())
    action = form_action(page.text)
    for username, password in (("shop-user", "wrong"), ("nobody", "shop-password"), ("shop-user", "")):
        retry = browser.post(action, data={"username": username, "password": password})
        assert retry.status_code == 401
        assert "Invalid username or password." in retry.text
        assert "set-cookie" not in retry.headers
    answer = browser.post(action, data={"username": "shop-user", "password": "shop-password"})
    assert redirect_params(answer, CALLBACK)["state"] == authorization.state
    assert browser.post(action, data={"username": "shop-user", "password": "shop-password"}).status_code == 400


def test_a_logged_in_browser_gets_a_code_without_the_form(browser: httpx.Client) -> None:
    log_in(browser, Authorization())
    again = Authorization()
    redirect = redirect_params(browser.get(AUTH_PATH, params=again.params()), CALLBACK)
    assert browser.post(TOKEN_PATH, data=again.token_form(redirect["code"])).status_code == 200
    assert browser.get(AUTH_PATH, params=again.params(prompt="login")).status_code == 200  # the form again


def test_prompt_none_without_a_session_is_login_required(browser: httpx.Client) -> None:
    authorization = Authorization()
    redirect = redirect_params(browser.get(AUTH_PATH, params=authorization.params(prompt="none")), CALLBACK)
    assert (redirect["error"], redirect["state"]) == ("login_required", authorization.state)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"client_id": "nobody"}, "Client not found."),
        ({"client_id": None}, "Client not found."),
        ({"redirect_uri": "https://evil.example/callback"}, "Invalid parameter: redirect_uri"),
        ({"redirect_uri": "http://localhost:5173@evil.example/"}, "Invalid parameter: redirect_uri"),
        ({"redirect_uri": "http://localhost:5173.evil.example/"}, "Invalid parameter: redirect_uri"),
        ({"redirect_uri": "http://localhost:5173/callback#x"}, "Invalid parameter: redirect_uri"),
        ({"redirect_uri": None}, "Invalid parameter: redirect_uri"),
    ],
)
def test_an_untrusted_client_or_redirect_uri_is_an_error_page_never_a_redirect(
    browser: httpx.Client, overrides: dict[str, str | None], message: str
) -> None:
    response = browser.get(AUTH_PATH, params=Authorization().params(**overrides))
    assert response.status_code == 400
    assert "location" not in response.headers
    assert message in response.text


@pytest.mark.parametrize(
    ("overrides", "error", "description"),
    [
        ({"response_type": None}, "invalid_request", "Missing parameter: response_type"),
        ({"response_type": "token"}, "unsupported_response_type", None),
        ({"code_challenge_method": None, "code_challenge": None}, "invalid_request", None),
        ({"code_challenge_method": "plain"}, "invalid_request", None),
        ({"code_challenge": None}, "invalid_request", "Missing parameter: code_challenge"),
        ({"code_challenge": "short"}, "invalid_request", "Invalid parameter: code_challenge"),
    ],
)
def test_a_bad_authorization_request_is_reported_at_the_redirect_uri_with_the_state(
    browser: httpx.Client, overrides: dict[str, str | None], error: str, description: str | None
) -> None:
    authorization = Authorization()
    redirect = redirect_params(browser.get(AUTH_PATH, params=authorization.params(**overrides)), CALLBACK)
    assert (redirect["error"], redirect["state"]) == (error, authorization.state)
    if description is not None:
        assert redirect["error_description"] == description


def test_the_confidential_client_may_use_the_code_flow_without_pkce_but_not_without_its_secret(
    browser: httpx.Client,
) -> None:
    authorization = Authorization(client_id="shop-dev")
    no_pkce = authorization.params(code_challenge=None, code_challenge_method=None)
    page = browser.get(AUTH_PATH, params=no_pkce)
    answer = browser.post(form_action(page.text), data={"username": "shop-user", "password": "shop-password"})
    form = authorization.token_form(redirect_params(answer, CALLBACK)["code"])
    del form["code_verifier"]
    assert_error(browser.post(TOKEN_PATH, data={**form, "client_secret": "wrong"}), 401, "unauthorized_client")
    form["code"] = redirect_params(browser.get(AUTH_PATH, params=no_pkce), CALLBACK)["code"]  # logged in: no form
    assert_error(
        browser.post(TOKEN_PATH, data=form), 401, "unauthorized_client", "Client secret not provided in request"
    )
    form["code"] = redirect_params(browser.get(AUTH_PATH, params=no_pkce), CALLBACK)["code"]
    assert browser.post(TOKEN_PATH, data={**form, "client_secret": "shop-dev-secret"}).status_code == 200


# the code at the token endpoint


def test_a_code_is_redeemed_once(browser: httpx.Client) -> None:
    authorization = Authorization()
    code = log_in(browser, authorization)["code"]
    assert browser.post(TOKEN_PATH, data=authorization.token_form(code)).status_code == 200
    assert_error(browser.post(TOKEN_PATH, data=authorization.token_form(code)), 400, "invalid_grant", "Code not valid")


@pytest.mark.parametrize(
    ("change", "status", "error", "description"),
    [
        ({"code_verifier": "x" * 43}, 400, "invalid_grant", "PKCE verification failed: Code mismatch"),
        ({"code_verifier": "bad verifier"}, 400, "invalid_grant", "PKCE verification failed: Invalid code verifier"),
        ({"code_verifier": ""}, 400, "invalid_grant", "PKCE code verifier not specified"),
        ({"redirect_uri": "http://localhost:5173/other"}, 400, "invalid_grant", "Incorrect redirect_uri"),
        ({"client_id": "shop-dev", "client_secret": "shop-dev-secret"}, 400, "invalid_grant", "Auth error"),
        ({"client_id": "nobody"}, 401, "invalid_client", None),
        ({"code": "made-up"}, 400, "invalid_grant", "Code not valid"),
        ({"code": ""}, 400, "invalid_request", "Missing parameter: code"),
    ],
)
def test_a_wrong_code_exchange_is_refused_and_burns_the_code(
    browser: httpx.Client, change: dict[str, str], status: int, error: str, description: str | None
) -> None:
    authorization = Authorization()
    code = log_in(browser, authorization)["code"]
    form = {**authorization.token_form(code), **change}
    assert_error(browser.post(TOKEN_PATH, data=form), status, error, description)
    if change.get("code", code) == code and error == "invalid_grant":  # the real code was spent
        assert_error(browser.post(TOKEN_PATH, data=authorization.token_form(code)), 400, "invalid_grant")


def test_an_expired_code_is_refused(live: tuple[MockApp, str], browser: httpx.Client) -> None:
    app, _ = live
    authorization = Authorization()
    code = log_in(browser, authorization)["code"]
    clock = app.realm.codes.clock
    app.realm.codes.clock = lambda: clock() + 61  # Keycloak's code lifespan is 60 s
    try:
        response = browser.post(TOKEN_PATH, data=authorization.token_form(code))
    finally:
        app.realm.codes.clock = clock
    assert_error(response, 400, "invalid_grant", "Code not valid")


# refresh


def test_refresh_rotates_the_refresh_token_and_refuses_the_old_one(browser: httpx.Client) -> None:
    tokens = code_tokens(browser)
    form = {"grant_type": "refresh_token", "client_id": "shop-web", "refresh_token": tokens["refresh_token"]}
    refreshed = browser.post(TOKEN_PATH, data=form)
    assert refreshed.status_code == 200, refreshed.text
    fresh = refreshed.json()
    assert fresh["refresh_token"] != tokens["refresh_token"]
    assert fresh["access_token"] != tokens["access_token"]
    assert verified(browser, fresh["id_token"], audience="shop-web")["sid"] == tokens["session_state"]
    assert browser.get(f"{GATEWAY}/customers/", headers=bearer(fresh["access_token"])).status_code == 200
    assert_error(
        browser.post(TOKEN_PATH, data=form), 400, "invalid_grant", "Maximum allowed refresh token reuse exceeded"
    )
    newer = browser.post(TOKEN_PATH, data={**form, "refresh_token": fresh["refresh_token"]})
    assert newer.status_code == 200


@pytest.mark.parametrize(
    ("change", "status", "error", "description"),
    [
        ({"refresh_token": "garbage"}, 400, "invalid_grant", "Invalid refresh token"),
        ({"refresh_token": ""}, 400, "invalid_request", "Missing parameter: refresh_token"),
        (
            {"client_id": "shop-dev", "client_secret": "shop-dev-secret"},
            400,
            "invalid_grant",
            "Invalid refresh token. Token client and authorized client don't match",
        ),
        ({"client_id": "shop-dev"}, 401, "unauthorized_client", "Client secret not provided in request"),
    ],
)
def test_a_wrong_refresh_is_refused(
    browser: httpx.Client, change: dict[str, str], status: int, error: str, description: str
) -> None:
    tokens = code_tokens(browser)
    form = {"grant_type": "refresh_token", "client_id": "shop-web", "refresh_token": tokens["refresh_token"], **change}
    assert_error(browser.post(TOKEN_PATH, data=form), status, error, description)


def test_only_access_tokens_open_the_api_and_only_refresh_tokens_refresh(browser: httpx.Client) -> None:
    tokens = code_tokens(browser)
    for kind in ("refresh_token", "id_token"):
        response = browser.get(f"{BACKEND}/productlines/", headers=bearer(tokens[kind]))
        assert response.status_code == 401, kind
    for kind in ("access_token", "id_token"):
        form = {"grant_type": "refresh_token", "client_id": "shop-web", "refresh_token": tokens[kind]}
        assert_error(browser.post(TOKEN_PATH, data=form), 400, "invalid_grant", "Invalid refresh token")


def test_the_password_grant_gives_a_refresh_token_and_respects_the_clients_settings(browser: httpx.Client) -> None:
    user = {"grant_type": "password", "username": "shop-user", "password": "shop-password", "scope": "openid"}
    tokens = browser.post(TOKEN_PATH, data={**DEV_CLIENT, **user}).json()
    assert {"refresh_token", "id_token"} <= set(tokens)
    refresh = {**DEV_CLIENT, "grant_type": "refresh_token", "refresh_token": tokens["refresh_token"]}
    assert browser.post(TOKEN_PATH, data=refresh).status_code == 200
    assert_error(
        browser.post(TOKEN_PATH, data={**user, "client_id": "shop-web"}),
        400,
        "unauthorized_client",
        "Client not allowed for direct access grants",
    )
    assert_error(
        browser.post(TOKEN_PATH, data={"grant_type": "client_credentials", "client_id": "shop-web"}),
        400,
        "unauthorized_client",
        "Public client not allowed to retrieve service account",
    )
    service = browser.post(TOKEN_PATH, data=DEV_CLIENT).json()
    assert "refresh_token" not in service
    assert service["refresh_expires_in"] == 0
    claims = jwt.decode(service["access_token"], options={"verify_signature": False})
    assert claims["preferred_username"] == "service-account-shop-dev"
    assert "shop-user" in claims["realm_access"]["roles"]
    assert_error(browser.post(TOKEN_PATH, data={"client_id": "shop-dev"}), 400, "invalid_request")


# userinfo and logout


def test_userinfo_answers_the_users_claims_and_refuses_bad_tokens(browser: httpx.Client) -> None:
    tokens = code_tokens(browser)
    for method in ("GET", "POST"):
        info = browser.request(method, USERINFO, headers=bearer(tokens["access_token"]))
        assert info.status_code == 200, info.text
        assert info.json()["preferred_username"] == "shop-user"
        assert info.json()["email"] == "shop-user@example.com"
    missing = browser.get(USERINFO)
    assert_error(missing, 401, "invalid_request", "Token not provided")
    for token in ("garbage", tokens["id_token"], tokens["refresh_token"]):
        refused = browser.get(USERINFO, headers=bearer(token))
        assert_error(refused, 401, "invalid_token", "Token verification failed")
        assert refused.headers["www-authenticate"].startswith('Bearer realm="shop", error="invalid_token"')


def test_logout_ends_the_session_and_returns_to_the_registered_uri_with_the_state(browser: httpx.Client) -> None:
    tokens = code_tokens(browser)
    params = {"id_token_hint": tokens["id_token"], "post_logout_redirect_uri": CALLBACK, "state": "bye"}
    response = browser.get(LOGOUT, params=params)
    assert response.status_code == 302
    assert response.headers["location"] == f"{CALLBACK}?state=bye"
    assert "KEYCLOAK_IDENTITY=" in response.headers["set-cookie"]
    refresh = {"grant_type": "refresh_token", "client_id": "shop-web", "refresh_token": tokens["refresh_token"]}
    assert_error(browser.post(TOKEN_PATH, data=refresh), 400, "invalid_grant", "Session not active")
    assert_error(browser.get(USERINFO, headers=bearer(tokens["access_token"])), 401, "invalid_token")
    assert browser.get(AUTH_PATH, params=Authorization().params()).status_code == 200  # the form: logged out


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"post_logout_redirect_uri": "https://evil.example/"}, "Invalid redirect uri"),
        ({"post_logout_redirect_uri": CALLBACK, "with": "no client"}, "client_id or the parameter id_token_hint"),
        ({"id_token_hint": "garbage"}, "Invalid parameter: id_token_hint"),
    ],
)
def test_a_bad_logout_request_is_an_error_page(browser: httpx.Client, params: dict[str, str], message: str) -> None:
    tokens = code_tokens(browser)
    if "with" in params:
        params = {key: value for key, value in params.items() if key != "with"}
    elif "id_token_hint" not in params:
        params = {**params, "id_token_hint": tokens["id_token"]}
    response = browser.get(LOGOUT, params=params)
    assert response.status_code == 400
    assert "location" not in response.headers
    assert message in response.text
    refresh = {"grant_type": "refresh_token", "client_id": "shop-web", "refresh_token": tokens["refresh_token"]}
    assert browser.post(TOKEN_PATH, data=refresh).status_code == 200  # still logged in


def test_logout_without_an_id_token_is_confirmed_and_a_client_may_log_out_with_its_refresh_token(
    browser: httpx.Client,
) -> None:
    browser_tokens = code_tokens(browser)
    confirmation = browser.get(LOGOUT)
    assert confirmation.status_code == 200 and "Do you want to log out?" in confirmation.text
    browser_refresh = {"grant_type": "refresh_token", "client_id": "shop-web"}
    renewed = browser.post(TOKEN_PATH, data={**browser_refresh, "refresh_token": browser_tokens["refresh_token"]})
    assert renewed.status_code == 200  # not yet logged out
    action, code = confirm_form(confirmation.text)
    page = browser.post(action, data={"session_code": code, "confirmLogout": "Logout"})
    assert page.status_code == 200
    assert "logged out" in page.text
    after = browser.post(TOKEN_PATH, data={**browser_refresh, "refresh_token": renewed.json()["refresh_token"]})
    assert_error(after, 400, "invalid_grant", "Session not active")
    user = {"grant_type": "password", "username": "shop-user", "password": "shop-password"}
    tokens = browser.post(TOKEN_PATH, data={**DEV_CLIENT, **user}).json()
    form = {"client_id": "shop-dev", "client_secret": "shop-dev-secret", "refresh_token": tokens["refresh_token"]}
    assert browser.post(LOGOUT, data=form).status_code == 204
    refresh = {**DEV_CLIENT, "grant_type": "refresh_token", "refresh_token": tokens["refresh_token"]}
    assert_error(browser.post(TOKEN_PATH, data=refresh), 400, "invalid_grant", "Session not active")
    assert_error(browser.post(LOGOUT, data={**form, "client_secret": "x"}), 401, "unauthorized_client")


def test_discovery_advertises_every_endpoint_and_each_answers(browser: httpx.Client) -> None:
    config = browser.get(f"{REALM}/.well-known/openid-configuration").json()
    assert {"authorization_code", "refresh_token"} <= set(config["grant_types_supported"])
    assert "S256" in config["code_challenge_methods_supported"]
    for name in ("authorization_endpoint", "userinfo_endpoint", "end_session_endpoint", "jwks_uri"):
        assert browser.get(config[name]).status_code != 404, name


def test_sessions_and_codes_stay_bounded(live: tuple[MockApp, str]) -> None:
    app, _ = live
    for store in (app.realm.sessions, app.realm.codes, app.realm.pending, app.realm.browsers, app.realm.logouts):
        assert len(store) <= store.capacity
    started = time.time()
    for number in range(3 * app.realm.sessions.capacity):
        app.realm.sessions.put(str(number), object(), 10)  # type: ignore[arg-type]
    assert len(app.realm.sessions) == app.realm.sessions.capacity
    assert time.time() - started < 5
