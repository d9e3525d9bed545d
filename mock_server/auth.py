"""Credentials: the accepted API keys, and a dev identity realm that issues and verifies RS256 JWTs.

The realm is Keycloak-compatible in what front ends use (discovery, JWKS, the token endpoint's
client_credentials and password grants), so a real login flow runs against the mock. Tokens are
verified for real: signature, algorithm, `exp` and `iss`.
"""

from __future__ import annotations

import json
import math
import secrets
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa

REALM = "shop"
REALM_PATH = f"/realms/{REALM}"
TOKEN_PATH = f"{REALM_PATH}/protocol/openid-connect/token"
DEV_CLIENT_ID = "shop-dev"
DEV_CLIENT_SECRET = "shop-dev-secret"
DEV_USERNAME = "shop-user"
DEV_PASSWORD = "shop-password"
CHALLENGE = f'Bearer realm="{REALM}"'


def same(known: str, given: str) -> bool:
    """Constant-time comparison of two texts, any characters (compare_digest takes only ASCII str)."""
    return secrets.compare_digest(known.encode(), given.encode())


def numeric_date(value: Any) -> bool:
    """A JWT NumericDate: a JSON number, not a string of digits and not a boolean."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def well_typed(claims: dict[str, Any]) -> bool:
    """The registered claims have their RFC 7519 types (PyJWT would accept `"exp": "123"`)."""
    if not all(numeric_date(claims[name]) for name in ("exp", "iat", "nbf") if name in claims):
        return False
    return all(isinstance(claims[name], str) for name in ("iss", "sub", "jti", "azp", "typ") if name in claims)


class InvalidGrant(Exception):
    """The token endpoint refuses the request; `error` is the OAuth 2 error code."""

    def __init__(self, error: str, description: str, status: int = 400) -> None:
        super().__init__(description)
        self.error = error
        self.status = status


@dataclass
class Realm:
    """Issues tokens for the dev client and user, and verifies bearer tokens."""

    issuer: str = f"http://127.0.0.1:8000{REALM_PATH}"
    token_ttl: int = 300
    clients: dict[str, str] = field(default_factory=lambda: {DEV_CLIENT_ID: DEV_CLIENT_SECRET})
    users: dict[str, str] = field(default_factory=lambda: {DEV_USERNAME: DEV_PASSWORD})
    cache_size: int = 1024

    def __post_init__(self) -> None:
        self._key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.kid = secrets.token_hex(8)
        self._verified: OrderedDict[str, dict[str, Any]] = OrderedDict()

    @property
    def public_key(self) -> rsa.RSAPublicKey:
        return self._key.public_key()

    def jwks(self) -> dict[str, Any]:
        jwk: dict[str, Any] = jwt.algorithms.RSAAlgorithm.to_jwk(self.public_key, as_dict=True)
        return {"keys": [{**jwk, "kid": self.kid, "use": "sig", "alg": "RS256"}]}

    def issue(self, form: dict[str, str], basic: tuple[str, str] | None = None) -> dict[str, Any]:
        """The token endpoint: `form` is the decoded request body, `basic` the client's Basic auth."""
        client_id, client_secret = basic or (form.get("client_id", ""), form.get("client_secret", ""))
        grant = form.get("grant_type")
        if grant not in {"client_credentials", "password"}:
            raise InvalidGrant("unsupported_grant_type", f"Unsupported grant_type {grant!r}.")
        known_secret = self.clients.get(client_id)
        if known_secret is None or not same(known_secret, client_secret):
            raise InvalidGrant("unauthorized_client", "Invalid client or client credentials.", status=401)
        subject = f"service-account-{client_id}"
        if grant == "password":
            username = form.get("username", "")
            known_password = self.users.get(username)
            if known_password is None or not same(known_password, form.get("password", "")):
                raise InvalidGrant("invalid_grant", "Invalid user credentials.", status=401)
            subject = username
        now = int(time.time())
        claims = {
            "iss": self.issuer,
            "sub": subject,
            "aud": "account",
            "azp": client_id,
            "typ": "Bearer",
            "preferred_username": subject,
            "scope": "openid profile email",
            "iat": now,
            "exp": now + self.token_ttl,
            "jti": secrets.token_hex(16),
        }
        return {
            "access_token": self.sign(claims),
            "expires_in": self.token_ttl,
            "refresh_expires_in": 0,
            "token_type": "Bearer",
            "not-before-policy": 0,
            "scope": claims["scope"],
        }

    def sign(self, claims: dict[str, Any]) -> str:
        """A JWT of these claims signed with the realm's key (RS256, with its `kid`)."""
        payload = json.dumps(claims, separators=(",", ":")).encode()
        return jwt.api_jws.encode(payload, self._key, algorithm="RS256", headers={"kid": self.kid, "typ": "JWT"})

    def verify(self, token: str) -> dict[str, Any] | None:
        """The token's claims, or None when it is not a valid, unexpired token of this realm.

        Verified tokens are cached (the signature check is the costly part); `exp` is checked on
        every use all the same. Claims of the wrong type are refused, never coerced.
        """
        claims = self._verified.get(token)
        if claims is not None:
            if claims["exp"] > time.time():
                return claims
            del self._verified[token]
            return None
        try:
            claims = jwt.decode(
                token,
                self.public_key,
                algorithms=["RS256"],
                issuer=self.issuer,
                options={"require": ["exp", "iss"], "verify_aud": False},
            )
        except jwt.PyJWTError:
            return None
        if not well_typed(claims):
            return None
        self._verified[token] = claims
        if len(self._verified) > self.cache_size:
            self._verified.popitem(last=False)
        return claims

    def discovery(self, base: str) -> dict[str, Any]:
        """The OpenID Connect discovery document, its endpoints under `base` (the realm's URL as called)."""
        endpoints = f"{base}/protocol/openid-connect"
        return {
            "issuer": self.issuer,
            "authorization_endpoint": f"{endpoints}/auth",
            "token_endpoint": f"{endpoints}/token",
            "jwks_uri": f"{endpoints}/certs",
            "grant_types_supported": ["client_credentials", "password"],
            "response_types_supported": ["token"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["RS256"],
            "token_endpoint_auth_methods_supported": ["client_secret_post", "client_secret_basic"],
            "scopes_supported": ["openid", "profile", "email"],
        }


@dataclass(frozen=True)
class ApiKeys:
    keys: frozenset[str]

    def accepts(self, key: str) -> bool:
        return any(secrets.compare_digest(key.encode(), known.encode()) for known in self.keys)
