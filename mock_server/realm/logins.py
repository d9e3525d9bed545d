"""What the realm remembers between requests: login sessions, authorization codes, pending logins.

A browser holds secrets of its own, never a value that a token, a redirect or a page carries. The
single-sign-on cookie's secret and the login form's binding are kept here only as SHA-256 digests.

Every one of them lives in a `Remembered` map. Entries expire, and the map never holds more than its
capacity, the oldest going first. So no sequence of requests grows the realm's memory without bound.
`Expiring` is the map of one process (`InProcess`). Replicas of one Redis state share theirs
(`realm.shared`), each value stored by its `codecs` codec. Whatever a replica must not use twice is
taken atomically, by `pop` and `swap`. That is an authorization code, or a refresh token's turn.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar

from mock_server.realm.realm_file import Client, User

Value = TypeVar("Value")
Kept = TypeVar("Kept")


class RealmUnavailable(Exception):
    """The realm's shared memory in Redis did not answer. The request gets a 503, never a hang."""


class Codec(Protocol[Kept]):
    """How a value of one map is stored outside the process, by realm.codecs."""

    def encode(self, value: Kept) -> bytes: ...

    def decode(self, data: bytes) -> Kept | None: ...


class Remembered(Protocol[Kept]):
    """An expiring, bounded map. It raises RealmUnavailable where its store does not answer."""

    def put(self, key: str, value: Kept, ttl: float) -> None: ...

    def get(self, key: str) -> Kept | None: ...

    def pop(self, key: str) -> Kept | None:
        """The value, taken. No other caller, on any replica, gets it too."""
        ...

    def swap(self, key: str, expected: Kept, value: Kept, ttl: float) -> bool:
        """Put `value` only if the key still holds `expected`. False if another caller changed it first."""
        ...


class Memory(Protocol):
    """Where the realm keeps its maps."""

    def map(self, name: str, codec: Codec[Kept], capacity: int) -> Remembered[Kept]: ...


class Expiring(Generic[Value]):
    """A map of expiring entries, capped at `capacity`. The least recently put is evicted first."""

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

    def swap(self, key: str, expected: Value, value: Value, ttl: float) -> bool:
        if self.get(key) != expected:
            return False
        self.put(key, value, ttl)
        return True

    def __len__(self) -> int:
        return len(self._entries)


class InProcess:
    """The realm's maps in this process. They are the default, and the only kind with the in-memory state."""

    def map(self, name: str, codec: Codec[Kept], capacity: int) -> Remembered[Kept]:
        return Expiring(capacity)


@dataclass
class Session:
    """A user's login, Keycloak's user session. It is what `sid` and `session_state` name."""

    id: str
    user: User
    started: int
    refresh_ids: dict[str, str] = field(default_factory=dict)  # client id -> the one valid refresh token's jti.
    browser: bytes | None = None  # The digest of the SSO cookie's secret, for a browser's login.


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
    response_mode: str  # "query" or "fragment".


@dataclass(frozen=True)
class AuthorizationCode:
    request: AuthorizationRequest
    session_id: str
    auth_time: int


@dataclass(frozen=True)
class PendingLogin:
    """A login form served, with the request it answers and the digest of the browser's binding cookie."""

    request: AuthorizationRequest
    binding: bytes


@dataclass(frozen=True)
class PendingLogout:
    """A logout asked without an ID token, waiting for the user's confirmation in the same browser."""

    session_id: str
    target: str | None  # Where to go afterwards. It is the checked post_logout_redirect_uri, with the state.
    binding: bytes
