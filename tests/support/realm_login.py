"""A browser's part of the authorization code flow, by hand over HTTP: PKCE, the login form, the code."""

from __future__ import annotations

import base64
import hashlib
import re
import secrets
from dataclasses import dataclass, field
from html import unescape
from urllib.parse import parse_qs, urlsplit

import httpx

REALM = "/realms/shop"
AUTH_PATH = f"{REALM}/protocol/openid-connect/auth"
WEB_CLIENT = "shop-web"
CALLBACK = "http://localhost:5173/callback"


def challenge_of(verifier: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()


@dataclass
class Authorization:
    """One authorization request's parameters, PKCE verifier included."""

    client_id: str = WEB_CLIENT
    redirect_uri: str = CALLBACK
    verifier: str = field(default_factory=lambda: secrets.token_urlsafe(48))
    state: str = field(default_factory=lambda: secrets.token_urlsafe(8))
    nonce: str = field(default_factory=lambda: secrets.token_urlsafe(8))

    def params(self, **overrides: str | None) -> dict[str, str]:
        params: dict[str, str | None] = {
            "client_id": self.client_id,
            "redirect_uri": self.redirect_uri,
            "response_type": "code",
            "scope": "openid profile email",
            "state": self.state,
            "nonce": self.nonce,
            "code_challenge": challenge_of(self.verifier),
            "code_challenge_method": "S256",
            **overrides,
        }
        return {key: value for key, value in params.items() if value is not None}

    def token_form(self, code: str, **overrides: str) -> dict[str, str]:
        form = {
            "grant_type": "authorization_code",
            "client_id": self.client_id,
            "code": code,
            "redirect_uri": self.redirect_uri,
            "code_verifier": self.verifier,
        }
        return {**form, **overrides}


def form_action(html: str) -> str:
    match = re.search(r'<form id="kc-form-login" action="([^"]+)"', html)
    assert match, html
    return unescape(match.group(1))


def redirect_params(response: httpx.Response, expected_target: str) -> dict[str, str]:
    """The query of a redirect to `expected_target`, one value per name."""
    assert response.status_code == 302, response.text
    location = response.headers["location"]
    assert location.split("?")[0] == expected_target, location
    return {name: values[0] for name, values in parse_qs(urlsplit(location).query).items()}


def log_in(
    http: httpx.Client,
    authorization: Authorization,
    username: str = "shop-user",
    password: str = "shop-password",
) -> dict[str, str]:
    """The authorization request, the login form filled in, the redirect's parameters (code, state...)."""
    page = http.get(AUTH_PATH, params=authorization.params())
    assert page.status_code == 200, page.text
    answer = http.post(form_action(page.text), data={"username": username, "password": password})
    return redirect_params(answer, authorization.redirect_uri)
