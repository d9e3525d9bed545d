"""Credentials: the accepted API keys, and a dev identity realm that issues and verifies RS256 JWTs.

The realm is Keycloak-compatible in what front ends use (discovery, JWKS, the token endpoint's
client_credentials and password grants), so a real login flow runs against the mock. Tokens are
verified for real: signature, algorithm, `exp` and `iss`.
"""

from __future__ import annotations

import secrets
import time
from collections import OrderedDict
from collections.abc import Iterable
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


class InvalidGrant(Exception):
    """The token endpoint refuses the request; `error` is the OAuth 2 error code."""

    def __init__(self, error: str, description: str, status: int = 400) -> None:
        super().__init__(description)
        self.error = error
        self.status = status


@dataclass
class Realm:
    """Issues tokens for the dev client and user, and verifies bearer tokens."""

    token_ttl: int = 300
    clients: dict[str, str] = field(default_factory=lambda: {DEV_CLIENT_ID: DEV_CLIENT_SECRET})
    users: dict[str, str] = field(default_factory=lambda: {DEV_USERNAME: DEV_PASSWORD})
    cache_size: int = 1024

    def __post_init__(self) -> None:
        self._key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.kid = secrets.token_hex(8)
        self._issuers: set[str] = set()
        self._verified: OrderedDict[str, dict[str, Any]] = OrderedDict()

    @property
    def public_key(self) -> rsa.RSAPublicKey:
        return self._key.public_key()

    def jwks(self) -> dict[str, Any]:
        jwk: dict[str, Any] = jwt.algorithms.RSAAlgorithm.to_jwk(self.public_key, as_dict=True)
        return {"keys": [{**jwk, "kid": self.kid, "use": "sig", "alg": "RS256"}]}

    def issue(self, issuer: str, form: dict[str, str], basic: tuple[str, str] | None = None) -> dict[str, Any]:
        """The token endpoint: `form` is the decoded request body, `basic` the client's Basic auth."""
        client_id, client_secret = basic or (form.get("client_id", ""), form.get("client_secret", ""))
        grant = form.get("grant_type")
        if grant not in {"client_credentials", "password"}:
            raise InvalidGrant("unsupported_grant_type", f"Unsupported grant_type {grant!r}.")
        if not secrets.compare_digest(self.clients.get(client_id, "\0"), client_secret):
            raise InvalidGrant("unauthorized_client", "Invalid client or client credentials.", status=401)
        subject = f"service-account-{client_id}"
        if grant == "password":
            username = form.get("username", "")
            if not secrets.compare_digest(self.users.get(username, "\0"), form.get("password", "")):
                raise InvalidGrant("invalid_grant", "Invalid user credentials.", status=401)
            subject = username
        now = int(time.time())
        claims = {
            "iss": issuer,
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
        self._issuers.add(issuer)
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
        return jwt.encode(claims, self._key, algorithm="RS256", headers={"kid": self.kid})

    def verify(self, token: str, issuers: Iterable[str] = ()) -> dict[str, Any] | None:
        """The token's claims, or None when it is not a valid, unexpired token of this realm.

        Verified tokens are cached (the signature check is the costly part); `exp` is checked on
        every use all the same.
        """
        claims = self._verified.get(token)
        if claims is not None:
            if claims["exp"] > time.time():
                return claims
            del self._verified[token]
            return None
        accepted = self._issuers | set(issuers)
        if not accepted:
            return None
        try:
            claims = jwt.decode(
                token,
                self.public_key,
                algorithms=["RS256"],
                issuer=list(accepted),
                options={"require": ["exp", "iss"], "verify_aud": False},
            )
        except jwt.PyJWTError:
            return None
        self._verified[token] = claims
        if len(self._verified) > self.cache_size:
            self._verified.popitem(last=False)
        return claims

    def discovery(self, issuer: str) -> dict[str, Any]:
        """The OpenID Connect discovery document of the realm at `issuer`."""
        endpoints = f"{issuer}/protocol/openid-connect"
        return {
            "issuer": issuer,
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
