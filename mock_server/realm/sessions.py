"""What the realm remembers between requests: login sessions, authorization codes, pending logins.

A browser holds secrets of its own, never a value that a token, a redirect or a page carries: the
single-sign-on cookie's secret and the login form's binding are kept here only as SHA-256 digests.

Every one of them lives in an `Expiring` map: entries expire, and the map never holds more than its
capacity (the oldest go first), so no sequence of requests grows the realm's memory without bound.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from mock_server.realm.realm_file import Client, User

Value = TypeVar("Value")


class Expiring(Generic[Value]):
    """A map of expiring entries, capped at `capacity` (least recently put evicted first)."""

    def __init__(self, capacity: int, clock: Callable[[], float] = time.time) -> None:
        self.capacity = capacity
        self.clock = clock
        self._entries: OrderedDict[str, tuple[float, Value]] = OrderedDict()

    def put(self, key: str, value: Value, ttl: float) -> None:
        self._entries[key] = (self.clock() + ttl, value)
        self._entries.move_to_end(key)
        while len(self._entries) > self.capacity:
            self._entries.popitem(last=False)

    def get(self, key: str) -> Value | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        if entry[0] <= self.clock():
            del self._entries[key]
            return None
        return entry[1]

    def pop(self, key: str) -> Value | None:
        value = self.get(key)
        self._entries.pop(key, None)
        return value

    def __len__(self) -> int:
        return len(self._entries)


@dataclass
class Session:
    """A user's login (Keycloak's user session): what `sid` and `session_state` name."""

    id: str
    user: User
    started: int
    refresh_ids: dict[str, str] = field(default_factory=dict)  # client id -> the one valid refresh token's jti
    browser: bytes | None = None  # the digest of the SSO cookie's secret, for a browser's login


@dataclass(frozen=True)
class AuthorizationRequest:
    """What a client asked at the authorization endpoint, checked, kept until the user logs in."""

    client: Client
    redirect_uri: str
    scope: str
    state: str | None
    nonce: str | None
    code_challenge: str | None
    code_challenge_method: str | None
    response_mode: str  # "query" or "fragment"


@dataclass(frozen=True)
class AuthorizationCode:
    request: AuthorizationRequest
    session_id: str
    auth_time: int


@dataclass(frozen=True)
class PendingLogin:
    """A login form served: the request it answers, and the digest of the browser's binding cookie."""

    request: AuthorizationRequest
    binding: bytes


@dataclass(frozen=True)
class PendingLogout:
    """A logout asked without an ID token, waiting for the user's confirmation in the same browser."""

    session_id: str
    target: str | None  # where to go afterwards: the checked post_logout_redirect_uri, with the state
    binding: bytes
