"""The realm's signing keys, RSA keys kept in one PEM file across restarts. The first signs, and all verify.

A developer's browser holds tokens across restarts of the mock, so the key must outlive the process.
Each key's `kid` is its RFC 7638 thumbprint. So the same key has the same `kid` in every run, with no
metadata to keep beside the PEM. Rotation puts a new key first and keeps the previous ones in the
JWKS, so tokens signed before the rotation still verify until they expire.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from shop_contract.files import read_at_most

KEEP_KEYS = 3  # After a rotation, the new key and the two before it.
MAX_KEY_FILE_BYTES = 1024 * 1024  # Three RSA keys as PEM take about 5 KB.
PEM_KEY = re.compile(rb"-----BEGIN (?:RSA )?PRIVATE KEY-----.*?-----END (?:RSA )?PRIVATE KEY-----", re.DOTALL)


class KeyFileError(Exception):
    """The key file cannot be read, written, or holds no usable RSA private key."""


def default_key_file() -> Path:
    """Where the mock keeps its realm keys unless told otherwise, in the user's cache directory."""
    cache = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(cache) / "shop-mock" / "realm-keys.pem"


def new_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def public_jwk(key: rsa.RSAPublicKey) -> dict[str, Any]:
    jwk: dict[str, Any] = jwt.algorithms.RSAAlgorithm.to_jwk(key, as_dict=True)
    return jwk


def thumbprint(key: rsa.RSAPublicKey) -> str:
    """The RFC 7638 thumbprint, the SHA-256 of the key's required members as canonical JSON, in base64url."""
    jwk = public_jwk(key)
    canonical = json.dumps({"e": jwk["e"], "kty": "RSA", "n": jwk["n"]}, separators=(",", ":"), sort_keys=True)
    return base64.urlsafe_b64encode(hashlib.sha256(canonical.encode()).digest()).rstrip(b"=").decode()


@dataclass(frozen=True)
class KeyRing:
    """The realm's keys, newest first. `signing` signs, and every key verifies the tokens it signed."""

    keys: tuple[rsa.RSAPrivateKey, ...]

    def __post_init__(self) -> None:
        if not self.keys:
            raise KeyFileError("a key ring needs at least one key")

    @classmethod
    def generated(cls) -> KeyRing:
        """One fresh key, held in memory only, for tests and for runs that must not touch the disk."""
        return cls((new_key(),))

    @classmethod
    def from_file(cls, path: Path, rotate: bool = False) -> KeyRing:
        """The keys in `path`, created with mode 0600 if missing. `rotate` puts a new signing key first."""
        try:
            keys = read_keys(path) if path.exists() else ()
            if not keys or rotate:
                keys = (new_key(), *keys)[:KEEP_KEYS]
                write_keys(path, keys)
        except OSError as error:
            raise KeyFileError(f"realm key file {path}: {error.strerror or error}") from error
        return cls(keys)

    @classmethod
    def from_pem(cls, pem: bytes, source: str) -> KeyRing:
        return cls(parse_keys(pem, source))

    def pem(self) -> bytes:
        """The keys as PEM (PKCS#8), newest first, as a key file holds them."""
        return b"".join(
            key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            )
            for key in self.keys
        )

    @property
    def signing(self) -> rsa.RSAPrivateKey:
        return self.keys[0]

    @property
    def kid(self) -> str:
        return thumbprint(self.signing.public_key())

    def public_keys(self) -> dict[str, rsa.RSAPublicKey]:
        """Every verifying key by its `kid`."""
        return {thumbprint(key.public_key()): key.public_key() for key in self.keys}

    def jwks(self) -> dict[str, Any]:
        return {
            "keys": [
                {**public_jwk(key), "kid": kid, "use": "sig", "alg": "RS256"} for kid, key in self.public_keys().items()
            ]
        }


def read_keys(path: Path) -> tuple[rsa.RSAPrivateKey, ...]:
    return parse_keys(read_at_most(path, MAX_KEY_FILE_BYTES), f"realm key file {path}")


def parse_keys(pem: bytes, source: str) -> tuple[rsa.RSAPrivateKey, ...]:
    keys = []
    for block in PEM_KEY.findall(pem):
        try:
            key = serialization.load_pem_private_key(block, password=None)
        except (ValueError, TypeError) as error:
            raise KeyFileError(f"{source}: a key cannot be read ({error})") from error
        if not isinstance(key, rsa.RSAPrivateKey):
            raise KeyFileError(f"{source}: only RSA keys can sign RS256 tokens")
        keys.append(key)
    if not keys:
        raise KeyFileError(f"{source}: no PEM private key in it")
    return tuple(keys)


def write_keys(path: Path, keys: tuple[rsa.RSAPrivateKey, ...]) -> None:
    """Write `keys` to `path` at once, readable by the owner only, since the file holds private keys."""
    pem = KeyRing(keys).pem()
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "wb") as file:
        file.write(pem)
    os.replace(partial, path)
