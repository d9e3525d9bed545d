"""HTTP endpoints of the dev identity realm, at Keycloak's paths under /realms/shop."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from mock_server.auth import REALM_PATH, TOKEN_PATH, InvalidGrant, Realm

Endpoint = Callable[[Request], Any]


def realm_url(request: Request) -> str:
    """The realm's issuer URL on the host the client called (honouring a proxy's forwarded headers)."""
    host = request.headers.get("x-forwarded-host", request.headers.get("host", request.url.netloc))
    scheme = request.headers.get("x-forwarded-proto", request.url.scheme)
    return f"{scheme.split(',')[0].strip()}://{host.split(',')[0].strip()}{REALM_PATH}"


def basic_credentials(request: Request) -> tuple[str, str] | None:
    """Client credentials sent as HTTP Basic (client_secret_basic), if any."""
    scheme, _, value = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        client_id, _, secret = base64.b64decode(value).decode().partition(":")
    except (binascii.Error, UnicodeDecodeError):
        return None
    return unquote(client_id), unquote(secret)


class Identity:
    def __init__(self, realm: Realm) -> None:
        self.realm = realm

    def routes(self) -> list[tuple[str, str, Endpoint]]:
        endpoints = f"{REALM_PATH}/protocol/openid-connect"
        return [
            ("GET", f"{REALM_PATH}/.well-known/openid-configuration", self.discovery),
            ("GET", f"{endpoints}/certs", self.certs),
            ("POST", TOKEN_PATH, self.token),
        ]

    async def discovery(self, request: Request) -> Response:
        return JSONResponse(self.realm.discovery(realm_url(request)))

    async def certs(self, request: Request) -> Response:
        return JSONResponse(self.realm.jwks())

    async def token(self, request: Request) -> Response:
        try:
            form = await request.form()
        except Exception:  # starlette raises assorted errors on a malformed form
            return self._error(InvalidGrant("invalid_request", "The body must be a form."))
        fields = {key: value for key, value in form.items() if isinstance(value, str)}
        try:
            grant = self.realm.issue(realm_url(request), fields, basic_credentials(request))
        except InvalidGrant as error:
            return self._error(error)
        return JSONResponse(grant, headers={"cache-control": "no-store", "pragma": "no-cache"})

    @staticmethod
    def _error(error: InvalidGrant) -> JSONResponse:
        body = {"error": error.error, "error_description": str(error)}
        return JSONResponse(body, status_code=error.status)
