"""The dev identity realm, a Keycloak-compatible OpenID Connect provider for front ends and tests.

This package holds:

- The signing keys, kept in a file (`keys`).
- Users and clients from a Keycloak realm export (`realm_file`).
- Signing and strict verification (`tokens`).
- What the realm remembers, bounded and expiring (`logins`).
- The grants and the browser flows (`flows`).
- The login page's HTML (`login_page`).
- Its HTTP endpoints (`identity`).

It may import `http`, for masking the access log, and `settings`, read only. The core, all but
`identity`, imports no web framework. The API verifies the realm's tokens, and the realm knows no API.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from mock_server.realm.flows import Realm
from mock_server.realm.keys import KEEP_KEYS, KeyFileError, KeyRing
from mock_server.realm.logins import Memory
from mock_server.realm.realm_file import RealmFileError, read_realm_file
from mock_server.settings import Settings

__all__ = ["KeyFileError", "Realm", "RealmFileError", "SharedValue", "open_realm"]

SharedValue = Callable[[str, bytes, bool], bytes]
"""(name, this replica's value, replace) -> the value all replicas of a shared state use."""
SHARED_KEYS = "realm-keys"


def open_realm(settings: Settings, shared: SharedValue | None = None, memory: Memory | None = None) -> Realm:
    """The realm the settings describe, with its file, its keys and its issuer.

    The keys come from a file, or are made in memory. With `shared`, for replicas on one Redis state,
    every replica signs and verifies with the same keys. They are the first replica's, or a rotating
    replica's (`--rotate-realm-key`). So a token issued by one verifies on every other. With `memory`
    (realm.shared), the replicas share logins, codes and sessions too.
    """
    config = read_realm_file(settings.realm_file)
    if settings.token_ttl is not None:
        config = dataclasses.replace(config, access_token_lifespan=settings.token_ttl)
    keys: KeyRing | Callable[[], KeyRing]
    if shared is not None:
        keys = shared_keys(shared, own_keys(settings), settings.rotate_realm_key)
    elif settings.realm_key is None:
        keys = KeyRing.generated  # Made at the first token (realm/tokens.py), not at start-up.
    else:
        keys = own_keys(settings)
    return Realm(config, keys, settings.issuer_for(f"/realms/{config.name}"), memory)


def own_keys(settings: Settings) -> KeyRing:
    """This replica's keys: the key file's, else one key made in memory."""
    if settings.realm_key is None:
        return KeyRing.generated()
    return KeyRing.from_file(settings.realm_key, rotate=settings.rotate_realm_key)


def shared_keys(shared: SharedValue, mine: KeyRing, rotate: bool) -> KeyRing:
    """The key ring all replicas use, which is the first one shared.

    With `rotate`, this replica's new signing key is put in front of it, and the previous keys still
    verify.
    """
    current = KeyRing.from_pem(shared(SHARED_KEYS, mine.pem(), False), "the shared realm keys")
    if not rotate:
        return current
    rotated = KeyRing((mine.signing, *current.keys)[:KEEP_KEYS])
    return KeyRing.from_pem(shared(SHARED_KEYS, rotated.pem(), True), "the shared realm keys")
