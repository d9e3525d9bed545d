"""The dev identity realm: a Keycloak-compatible OpenID Connect provider for front ends and tests.

keys (the signing keys, kept in a file), realm_file (users and clients from a Keycloak realm
export), tokens (signing, strict verification), logins (what it remembers: bounded, expiring), flows (the
grants and the browser flows), login_page (HTML), identity (its HTTP endpoints).

May import: `http` (masking the access log) and `settings` (read only); the core (all but
`identity`) imports no web framework. The API verifies the realm's tokens; the realm knows no API.
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
    """The realm the settings describe: its file, its keys (a file, or one in memory), its issuer.

    With `shared` (replicas on one Redis state), every replica signs and verifies with the same keys:
    the first replica's, or a rotating replica's (`--rotate-realm-key`), so a token issued by one
    verifies on every other; with `memory` (realm.shared), they share logins, codes and sessions too."""
    config = read_realm_file(settings.realm_file)
    if settings.token_ttl is not None:
        config = dataclasses.replace(config, access_token_lifespan=settings.token_ttl)
    if settings.realm_key is None:
        keys = KeyRing.generated()
    else:
        keys = KeyRing.from_file(settings.realm_key, rotate=settings.rotate_realm_key)
    if shared is not None:
        keys = shared_keys(shared, keys, settings.rotate_realm_key)
    return Realm(config, keys, settings.issuer_for(f"/realms/{config.name}"), memory)


def shared_keys(shared: SharedValue, mine: KeyRing, rotate: bool) -> KeyRing:
    """The key ring all replicas use: the first one shared; with `rotate`, this replica's new signing
    key put in front of it (the previous keys still verify)."""
    current = KeyRing.from_pem(shared(SHARED_KEYS, mine.pem(), False), "the shared realm keys")
    if not rotate:
        return current
    rotated = KeyRing((mine.signing, *current.keys)[:KEEP_KEYS])
    return KeyRing.from_pem(shared(SHARED_KEYS, rotated.pem(), True), "the shared realm keys")
