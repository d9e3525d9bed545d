"""The realm's browser surface over real HTTP: the single-sign-on cookie is a secret of its own, the
login form answers only the browser it was served to (login CSRF), and no other site frames a page."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import jwt
import pytest

from mock_server.app import create_app
from mock_server.settings import Settings
from tests.conftest import TOKEN_PATH
from tests.mock_server.realm.test_flows import confirm_form
from tests.support.live import TRUSTED, running
from tests.support.realm_login import AUTH_PATH, CALLBACK, REALM, Authorization, form_action, log_in, redirect_params

SSO_COOKIE = "KEYCLOAK_IDENTITY"
LOGIN_COOKIE = "AUTH_SESSION_ID"
USER = {"username": "shop-user", "password": "shop-password"}
COOKIE_NOT_FOUND = "Cookie not found. Please make sure cookies are enabled in your browser."
LOGOUT = f"{REALM}/protocol/openid-connect/logout"


@pytest.fixture(scope="module")
def origin() -> Iterator[str]:
    with running(create_app(Settings())) as served:
        yield served


def browser(origin: str) -> httpx.Client:
    """A fresh browser: its own cookie jar, redirects not followed (the test reads them)."""
    return httpx.Client(base_url=origin, timeout=30, follow_redirects=False, verify=TRUSTED)


def set_cookie(response: httpx.Response, name: str) -> str:
    """The whole Set-Cookie header of `name` (value and attributes)."""
    found = [value for value in response.headers.get_list("set-cookie") if value.startswith(f"{name}=")]
    assert len(found) == 1, response.headers
    return found[0]


def test_a_cookie_made_from_a_tokens_sid_gets_the_login_form_not_a_code(origin: str) -> None:
    with browser(origin) as victim, browser(origin) as attacker:
        authorization = Authorization()
        redirect = log_in(victim, authorization)
        tokens = victim.post(TOKEN_PATH, data=authorization.token_form(redirect["code"])).json()
        sid = jwt.decode(tokens["access_token"], options={"verify_signature": False})["sid"]
        assert sid == redirect["session_state"] == tokens["session_state"]  # public identifiers, as in Keycloak
        attacker.cookies.set(SSO_COOKIE, sid, path=REALM)
        page = attacker.get(AUTH_PATH, params=Authorization().params())
        assert page.status_code == 200 and 'id="kc-form-login"' in page.text
        assert attacker.get(AUTH_PATH, params=Authorization().params(prompt="none")).status_code == 302
        assert "code" not in redirect_params(
            attacker.get(AUTH_PATH, params=Authorization().params(prompt="none")), CALLBACK
        )
        victim_again = victim.get(AUTH_PATH, params=Authorization().params())  # the real cookie still works
        assert "code" in redirect_params(victim_again, CALLBACK)


def test_the_sso_cookie_is_a_secret_found_in_no_token_redirect_or_body(origin: str) -> None:
    with browser(origin) as http:
        authorization = Authorization()
        page = http.get(AUTH_PATH, params=authorization.params())
        answer = http.post(form_action(page.text), data=USER)
        cookie = set_cookie(answer, SSO_COOKIE)
        assert {"HttpOnly", "SameSite=lax", f"Path={REALM}"} <= {part.strip() for part in cookie.split(";")}
        secret = http.cookies[SSO_COOKIE]
        code = redirect_params(answer, CALLBACK)["code"]
        tokens = http.post(TOKEN_PATH, data=authorization.token_form(code)).json()
        claims = [
            jwt.decode(tokens[kind], options={"verify_signature": False})
            for kind in ("access_token", "id_token", "refresh_token")
        ]
        seen = [answer.headers["location"], answer.text, json.dumps(tokens), json.dumps(claims)]
        assert len(secret) >= 43 and not any(secret in text for text in seen)


def test_logging_out_with_a_cookie_made_from_a_sid_ends_no_session(origin: str) -> None:
    with browser(origin) as victim, browser(origin) as attacker:
        authorization = Authorization()
        code = log_in(victim, authorization)["code"]
        tokens = victim.post(TOKEN_PATH, data=authorization.token_form(code)).json()
        attacker.cookies.set(SSO_COOKIE, tokens["session_state"], path=REALM)
        assert attacker.get(LOGOUT).status_code == 200
        refresh = {"grant_type": "refresh_token", "client_id": "shop-web", "refresh_token": tokens["refresh_token"]}
        assert victim.post(TOKEN_PATH, data=refresh).status_code == 200


def test_the_login_page_sets_the_binding_cookie(origin: str) -> None:
    with browser(origin) as http:
        page = http.get(AUTH_PATH, params=Authorization().params())
        cookie = set_cookie(page, LOGIN_COOKIE)
        assert {"HttpOnly", "SameSite=lax", f"Path={REALM}"} <= {part.strip() for part in cookie.split(";")}
        again = http.get(AUTH_PATH, params=Authorization().params())  # a second tab: the same binding
        assert http.cookies[LOGIN_COOKIE] in set_cookie(again, LOGIN_COOKIE)
        first, second = form_action(page.text), form_action(again.text)
        assert redirect_params(http.post(first, data=USER), CALLBACK)["code"]
        assert http.post(second, data=USER).status_code == 302  # both tabs log in


def test_a_login_form_posted_without_the_pages_cookie_is_refused(origin: str) -> None:
    with browser(origin) as served, browser(origin) as other:
        page = served.get(AUTH_PATH, params=Authorization().params())
        action = form_action(page.text)
        cross_site = {"Origin": "http://attacker.example", "Referer": "http://attacker.example/"}
        refused = other.post(action, data=USER, headers=cross_site)
        assert refused.status_code == 400, refused.text
        assert COOKIE_NOT_FOUND in refused.text and "location" not in refused.headers
        assert SSO_COOKIE not in other.cookies
        other.cookies.set(LOGIN_COOKIE, "x" * 43, path=REALM)  # some other browser's binding
        wrong = other.post(action, data=USER)
        assert wrong.status_code == 400 and "location" not in wrong.headers and SSO_COOKIE not in other.cookies
        assert (
            other.get(AUTH_PATH, params=Authorization().params(prompt="none")).headers["location"].count("code=") == 0
        )
        other.cookies.set(LOGIN_COOKIE, served.cookies[LOGIN_COOKIE], path=REALM)  # the page's own cookie
        assert "code" in redirect_params(other.post(action, data=USER), CALLBACK)


def test_no_other_site_may_frame_the_realms_pages(origin: str) -> None:
    with browser(origin) as http:
        login_form = http.get(AUTH_PATH, params=Authorization().params())
        error_page = http.get(AUTH_PATH, params=Authorization().params(client_id="nobody"))
        logged_out = http.get(LOGOUT)
    for page in (login_form, error_page, logged_out):
        assert page.headers["content-type"].startswith("text/html"), page.text
        assert page.headers["x-frame-options"] == "SAMEORIGIN"
        assert "frame-ancestors 'self'" in page.headers["content-security-policy"]
        assert page.headers["referrer-policy"] == "no-referrer"


def test_a_logout_without_an_id_token_needs_the_users_confirmation_in_the_same_browser(origin: str) -> None:
    with browser(origin) as victim, browser(origin) as other:
        authorization = Authorization()
        code = log_in(victim, authorization)["code"]
        tokens = victim.post(TOKEN_PATH, data=authorization.token_form(code)).json()
        refresh = {"grant_type": "refresh_token", "client_id": "shop-web", "refresh_token": tokens["refresh_token"]}
        # a page of another site sends the browser to the logout URL: the user is asked, still logged in
        asked = victim.get(LOGOUT, params={"client_id": "shop-web", "post_logout_redirect_uri": CALLBACK})
        assert asked.status_code == 200 and "Do you want to log out?" in asked.text
        assert asked.headers["x-frame-options"] == "SAMEORIGIN"
        action, session_code = confirm_form(asked.text)
        refused = other.post(action, data={"session_code": session_code})  # without the browser's cookie
        assert refused.status_code == 400 and COOKIE_NOT_FOUND in refused.text
        victim_binding = victim.cookies[LOGIN_COOKIE]
        other.cookies.set(LOGIN_COOKIE, "x" * 43, path=REALM)
        assert other.post(action, data={"session_code": session_code}).status_code == 400
        renewed = victim.post(TOKEN_PATH, data=refresh)
        assert renewed.status_code == 200  # still logged in
        assert victim.post(action, data={"session_code": "guessed"}).status_code == 400
        confirmed = victim.post(action, data={"session_code": session_code, "confirmLogout": "Logout"})
        assert (confirmed.status_code, confirmed.headers["location"]) == (302, CALLBACK)
        assert victim.cookies[LOGIN_COOKIE] == victim_binding and SSO_COOKIE not in victim.cookies
        again = {**refresh, "refresh_token": renewed.json()["refresh_token"]}
        assert victim.post(TOKEN_PATH, data=again).status_code == 400  # logged out
        assert victim.post(action, data={"session_code": session_code}).status_code == 400  # used once
