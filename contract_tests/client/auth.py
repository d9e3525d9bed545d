"""Credentials obtained: a token fetched from an OpenID Connect realm, and forged tokens.

The forged tokens feed the auth matrix, and each must be refused.
- "expired" is the realm token's claims moved into the past, signed under a throwaway key with the
  realm's `kid`. A client cannot mint a realm-signed expired token, so this stands in for one.
- "hs256_public_key" is the classic algorithm confusion: HS256 keyed with the realm's RSA public key.
  It is forged only when the realm publishes its keys.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import math
import time
from typing import Any

import httpx
import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from contract_tests.client.bounded import Limits, ResponseTooLarge
from contract_tests.client.bounded_httpx import httpx_client, send_httpx
from contract_tests.client.keyring import CredentialsError, Realm
from contract_tests.options import carried_by_a_header

TOKEN_SUFFIX = "/protocol/openid-connect/token"
DISCOVERY_SUFFIX = "/.well-known/openid-configuration"


class TokenEndpointUnreachable(CredentialsError):
    """No answer from the token endpoint. It may still be starting."""


def _get_or_post(limits: Limits, method: str, url: str, form: dict[str, str] | None = None) -> httpx.Response:
    """One request to the realm, under the run's deadline, size limit and TLS trust, like any other."""
    with httpx_client(limits) as client:
        return send_httpx(client, client.build_request(method, url, data=form), limits)


def fetch_token(realm: Realm, limits: Limits) -> tuple[str, float | None]:
    """A client_credentials grant against an OpenID Connect token endpoint. It answers the token and its
    `expires_in`."""
    token_url = realm.token_url
    form = {"grant_type": "client_credentials", "client_id": realm.client_id, "client_secret": realm.client_secret}
    try:
        response = _get_or_post(limits, "POST", token_url, form)
    except ResponseTooLarge as exc:
        raise CredentialsError(f"the token endpoint {token_url} answered more than {exc.limit} bytes") from exc
    except httpx.HTTPError as exc:
        raise TokenEndpointUnreachable(f"cannot reach the token endpoint {token_url}: {exc}") from exc
    if response.status_code != 200:
        raise CredentialsError(
            f"the token endpoint {token_url} refused the client credentials (HTTP {response.status_code})"
        )
    try:
        answer = response.json()
    except (ValueError, RecursionError) as exc:
        raise CredentialsError(
            f"the token endpoint {token_url} answered no access_token (not JSON, or nested too deeply)"
        ) from exc
    token = answer.get("access_token") if isinstance(answer, dict) else None
    if not (isinstance(token, str) and carried_by_a_header(token)):
        # Said without the value: it may be a secret. Sent as it came, it was an empty Bearer, `None`, an
        # injected header, or an encoding error in the middle of the run.
        raise CredentialsError(f"the token endpoint {token_url} answered no access_token a header can carry")
    return token, lifetime(answer.get("expires_in"))


def lifetime(expires_in: object) -> float | None:
    """`expires_in` in seconds, or None where it says nothing usable. A number, or its decimal text, as
    some token endpoints send it (Azure AD's v1 endpoint: `"3599"`), positive and finite."""
    if isinstance(expires_in, str):
        try:
            expires_in = float(expires_in)
        except ValueError:
            return None
    if isinstance(expires_in, bool) or not isinstance(expires_in, int | float):
        return None
    return float(expires_in) if math.isfinite(expires_in) and expires_in > 0 else None


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _segment(value: dict[str, Any]) -> str:
    return _b64(json.dumps(value, separators=(",", ":")).encode())


def _claims_and_header(token: str | None) -> tuple[dict[str, Any], dict[str, Any]]:
    now = int(time.time())
    default = {"sub": "contract-suite", "iat": now, "exp": now + 300}
    if token is None:
        return default, {"alg": "RS256", "typ": "JWT"}
    try:
        return jwt.decode(token, options={"verify_signature": False}), jwt.get_unverified_header(token)
    except jwt.PyJWTError:
        return default, {"alg": "RS256", "typ": "JWT"}


def realm_public_key(token: str | None, token_url: str | None, limits: Limits) -> bytes | None:
    """The realm's first RSA public key (PEM), found through OIDC discovery. None when it is not published."""
    claims, _ = _claims_and_header(token)
    realm = token_url.removesuffix(TOKEN_SUFFIX) if token_url else claims.get("iss")
    if not realm:
        return None
    try:
        discovery = _get_or_post(limits, "GET", f"{realm}{DISCOVERY_SUFFIX}").json()
        keys = _get_or_post(limits, "GET", str(discovery["jwks_uri"])).json()["keys"]
        key = jwt.algorithms.RSAAlgorithm.from_jwk(json.dumps(keys[0]))
    except (httpx.HTTPError, httpx.InvalidURL, ResponseTooLarge, ValueError, KeyError, IndexError, TypeError):
        return None
    except RecursionError:
        return None
    except jwt.PyJWTError:
        return None
    if not isinstance(key, rsa.RSAPublicKey):
        return None
    return key.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)


def forged_tokens(token: str | None, public_pem: bytes | None) -> dict[str, str]:
    """Tokens a correct service refuses, by name."""
    claims, header = _claims_and_header(token)
    throwaway = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    kid = {"kid": header["kid"]} if "kid" in header else {}
    now = int(time.time())
    expired = {**claims, "iat": now - 7200, "nbf": now - 7200, "exp": now - 3600}
    forged = {
        "malformed": "not-a-jwt",
        "garbage_segments": f"{_b64(b'{')}.{_b64(b'garbage')}.{_b64(b'sig')}",
        "alg_none": f"{_segment({'alg': 'none', 'typ': 'JWT'})}.{_segment(claims)}.",
        "wrongly_signed": jwt.encode(claims, throwaway, algorithm="RS256", headers=kid),
        "expired": jwt.encode(expired, throwaway, algorithm="RS256", headers=kid),
    }
    if public_pem is not None:
        signing_input = f"{_segment({'alg': 'HS256', 'typ': 'JWT', **kid})}.{_segment(claims)}"
        signature = hmac.new(public_pem, signing_input.encode(), hashlib.sha256).digest()
        forged["hs256_public_key"] = f"{signing_input}.{_b64(signature)}"
    return forged
