"""The two schemes of the interface: an API key header, and RS256 bearer tokens of the identity realm."""

from __future__ import annotations

import functools
import hmac
from dataclasses import dataclass
from typing import Any

import jwt
from django.conf import settings
from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.exceptions import AuthenticationFailed
from rest_framework.request import Request

from tests.support.drf import API_KEY


@dataclass(frozen=True)
class Client:
    """Who made a request: the API key's holder or a token's subject (there are no user accounts)."""

    name: str
    is_authenticated: bool = True


class ApiKeyAuthentication(BaseAuthentication):
    """`X-API-Key: <key>`; no header means "not this scheme", a wrong key is refused."""

    def authenticate(self, request: Request) -> tuple[Client, None] | None:
        key = request.META.get("HTTP_X_API_KEY")
        if key is None:
            return None
        if not hmac.compare_digest(key.encode(), API_KEY.encode()):
            raise AuthenticationFailed("Invalid API key.")
        return Client("api-key"), None

    def authenticate_header(self, request: Request) -> str:
        return 'ApiKey realm="shop", header="X-API-Key"'


@functools.cache
def jwks_client(jwks_url: str) -> jwt.PyJWKClient:
    """One JWKS client per process: it caches the realm's keys."""
    return jwt.PyJWKClient(jwks_url)


class JWTAuthentication(BaseAuthentication):
    """`Authorization: Bearer <JWT>` signed RS256 by the realm (keys from its JWKS), with its `iss` and an `exp`."""

    def authenticate(self, request: Request) -> tuple[Client, dict[str, Any]] | None:
        scheme, _, token = get_authorization_header(request).decode("latin-1").partition(" ")
        if scheme.lower() != "bearer":
            return None
        realm: str = settings.SHOP_REALM_URL
        try:
            key = jwks_client(f"{realm}/protocol/openid-connect/certs").get_signing_key_from_jwt(token.strip())
            claims: dict[str, Any] = jwt.decode(
                token.strip(),
                key.key,
                algorithms=["RS256"],
                issuer=realm,
                options={"require": ["exp", "iss"], "verify_aud": False},
            )
        except jwt.PyJWTError as error:
            raise AuthenticationFailed(f"Invalid token: {error}") from None
        return Client(str(claims.get("sub", "token"))), claims

    def authenticate_header(self, request: Request) -> str:
        return 'Bearer realm="shop"'
