"""Signing and verifying the realm's JWTs, by RS256 with the key ring, one fixed issuer and strict types.

`verify` is on the hot path of every bearer request, because the fast path and Connexion both call it.
So a verified access token is cached by its text. A repeated request costs one dict look-up and one
`exp` comparison. The cache is bounded, and the signature is checked once per token.

The keys may come as a function that makes them. They are made at the first token signed or verified,
or when a server about to accept connections asks (`Realm.make_keys`: `shop-mock` does). So a mock built
in process for its API alone, as tests build hundreds, never waits for an RSA key: tens of milliseconds
at random.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from functools import cached_property
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa

from mock_server.realm.keys import KeyRing

ACCESS, ID, REFRESH = "Bearer", "ID", "Refresh"  # Keycloak's `typ` of each kind of token.


def numeric_date(value: Any) -> bool:
    """A JWT NumericDate. It is a JSON number, not a string of digits and not a boolean."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def well_typed(claims: dict[str, Any]) -> bool:
    """The registered claims have their RFC 7519 types. PyJWT alone would accept `"exp": "123"`."""
    if not all(numeric_date(claims[name]) for name in ("exp", "iat", "nbf", "auth_time") if name in claims):
        return False
    return all(isinstance(claims[name], str) for name in ("iss", "sub", "jti", "azp", "typ", "sid") if name in claims)


def half_hash(token: str) -> str:
    """OpenID Connect's `at_hash`, which is the left half of the token's SHA-256 in base64url."""
    digest = hashlib.sha256(token.encode()).digest()
    return base64.urlsafe_b64encode(digest[: len(digest) // 2]).rstrip(b"=").decode()


class Tokens:
    """The realm's signer and verifier."""

    def __init__(self, keys: KeyRing | Callable[[], KeyRing], issuer: str, cache_size: int = 1024) -> None:
        self._keys = keys
        self._making = threading.Lock()
        self.issuer = issuer
        self.cache_size = cache_size
        self._verified: OrderedDict[str, dict[str, Any]] = OrderedDict()

    @property
    def keys(self) -> KeyRing:
        """The key ring. It is made at the first call if it came as a function, once whatever the threads."""
        if not isinstance(self._keys, KeyRing):
            with self._making:
                if not isinstance(self._keys, KeyRing):
                    self._keys = self._keys()
        return self._keys

    @cached_property
    def _kid(self) -> str:
        return self.keys.kid

    @cached_property
    def _public(self) -> dict[str, rsa.RSAPublicKey]:
        return self.keys.public_keys()

    def sign(self, claims: dict[str, Any]) -> str:
        """A JWT of these claims under the signing key. Their types are not checked, because tests forge with it."""
        payload = json.dumps(claims, separators=(",", ":")).encode()
        headers = {"kid": self._kid, "typ": "JWT"}
        return jwt.api_jws.encode(payload, self.keys.signing, algorithm="RS256", headers=headers)

    def verify(self, token: str) -> dict[str, Any] | None:
        """The claims of a valid, unexpired access token of this realm, else None."""
        claims = self._verified.get(token)
        if claims is not None:
            if claims["exp"] > time.time():
                return claims
            del self._verified[token]
            count_rejected()
            return None
        claims = self.decode(token, ACCESS)
        if claims is None:
            count_rejected()
        else:
            self._verified[token] = claims
            if len(self._verified) > self.cache_size:
                self._verified.popitem(last=False)
        return claims

    def decode(self, token: str, kind: str, verify_exp: bool = True) -> dict[str, Any] | None:
        """The claims of a token of `kind` signed by one of the realm's keys for its issuer, else None."""
        try:
            key = self._public.get(jwt.get_unverified_header(token).get("kid", ""))
            if key is None:
                return None
            claims: dict[str, Any] = jwt.decode(
                token,
                key,
                algorithms=["RS256"],
                issuer=self.issuer,
                options={"require": ["exp", "iat", "iss"], "verify_aud": False, "verify_exp": verify_exp},
            )
        except (jwt.PyJWTError, TypeError, ValueError):
            return None
        if not well_typed(claims) or claims.get("typ") != kind:
            return None
        return claims


def count_rejected() -> None:
    """Count a token the realm refused.

    The counter is imported here, not at the top. `shop-mock`'s command line imports the realm. It
    must load without the mock extra, prometheus_client, to say in one line what to install.
    """
    from mock_server.ops.instruments import REJECTED_TOKENS

    REJECTED_TOKENS.inc()
