"""HTTP endpoints of the dev identity realm, at Keycloak's paths under /realms/shop."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl, unquote

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from mock_server.auth import REALM_PATH, TOKEN_PATH, InvalidGrant, Realm

Endpoint = Callable[[Request], Any]


def endpoints_base(request: Request) -> str:
    """The realm's URL on the host the client called, for the endpoints discovery lists.

    The issuer itself is fixed (`Realm.issuer`); only where the endpoints are reached follows the
    request, so that a browser on another host name reaches them.
    """
    return f"{str(request.base_url).rstrip('/')}{REALM_PATH}"


class FormError(Exception):
    """The token endpoint's body or Basic credentials cannot be read."""


def form_fields(body: bytes) -> dict[str, str]:
    """An urlencoded form, strictly: UTF-8 only, each field once (as Keycloak insists)."""
    try:
        pairs = parse_qsl(body.decode("utf-8"), keep_blank_values=True, errors="strict")
    except (UnicodeDecodeError, ValueError) as error:
        raise FormError("The form is not valid UTF-8 URL-encoded text.") from error
    fields = dict(pairs)
    if len(fields) != len(pairs):
        raise FormError("duplicated parameter")
    return fields


def basic_credentials(request: Request) -> tuple[str, str] | None:
    """Client credentials sent as HTTP Basic (client_secret_basic, URL-encoded UTF-8), if any."""
    scheme, _, value = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        client_id, colon, secret = base64.b64decode(value.strip(), validate=True).decode("utf-8").partition(":")
        if not colon:
            raise ValueError("no colon")
        return unquote(client_id, errors="strict"), unquote(secret, errors="strict")
    except (binascii.Error, ValueError) as error:  # UnicodeDecodeError is a ValueError
        raise FormError("Invalid Basic credentials.") from error


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
        return JSONResponse(self.realm.discovery(endpoints_base(request)))

    async def certs(self, request: Request) -> Response:
        return JSONResponse(self.realm.jwks())

    async def token(self, request: Request) -> Response:
        try:
            fields = form_fields(await request.body())
            basic = basic_credentials(request)
        except FormError as error:
            return self._error(InvalidGrant("invalid_request", str(error)))
        try:
            grant = self.realm.issue(fields, basic)
        except InvalidGrant as error:
            return self._error(error)
        return JSONResponse(grant, headers={"cache-control": "no-store", "pragma": "no-cache"})

    @staticmethod
    def _error(error: InvalidGrant) -> JSONResponse:
        body = {"error": error.error, "error_description": str(error)}
        return JSONResponse(body, status_code=error.status)
