"""Test sessions for parallel tests. They are named states, each a copy-on-write copy of the seed, that expire.

A client names its session with the `X-Mock-Session` header. From a browser it may use the
`mock_session` cookie, and the header wins. The first request naming a session creates it. The
session is a `state.overlay.OverlayStore` over the seed, which costs nothing until the session writes.
A session idle for `ttl` seconds is gone, and its next request starts afresh from the seed. At most
`limit` sessions exist at once, and one more is refused (`TooManySessions`, a 429).

Nothing here knows HTTP. `scope` reads the name from a request and routes the store.
"""

from __future__ import annotations

import datetime
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from mock_server.spec.quoting import quote
from mock_server.state.memory import MemoryStore
from mock_server.state.overlay import OverlayStore
from mock_server.state.store import Store

HEADER = "X-Mock-Session"
COOKIE = "mock_session"
NAME = re.compile(r"[A-Za-z0-9._~-]{1,64}")  # Safe in a header, a cookie and a URL path segment.
NAME_RULE = "1 to 64 characters among letters, digits and . _ ~ -"
_HEADER = HEADER.lower().encode()
_COOKIE = f"{COOKIE}=".encode()


class SessionError(Exception):
    """A request's session cannot be served. `status` and `detail` are its problem."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


def requested(headers: Iterable[tuple[bytes, bytes]]) -> list[str]:
    """The session names a request gives, from every `X-Mock-Session` header, else its `mock_session` cookie.

    It takes one pass over the raw headers. No header and no cookie is the common case, and costs only that."""
    named: list[str] = []
    cookie: str | None = None
    for name, value in headers:
        if name == _HEADER:
            named.append(value.decode("latin-1"))
        elif name == b"cookie" and _COOKIE in value:
            cookie = _cookie(value.decode("latin-1"))
    if not named and cookie is not None:
        named.append(cookie)
    return named


def session_name(headers: Iterable[tuple[bytes, bytes]]) -> str | None:
    """The one valid session name of a request, None without one. A SessionError (400) names what is wrong."""
    named = requested(headers)
    if not named:
        return None
    if len(named) > 1:
        raise SessionError(400, f"{HEADER}: give one session, not {len(named)} headers.")
    if not NAME.fullmatch(named[0]):
        raise SessionError(400, f"{HEADER} (or the {COOKIE} cookie) {quote(named[0])}: a session name is {NAME_RULE}.")
    return named[0]


def _cookie(header: str) -> str | None:
    for part in header.split(";"):
        name, _, value = part.strip().partition("=")
        if name == COOKIE:
            return value.strip().strip('"')
    return None


class SessionStore(Store, Protocol):
    def size(self) -> int:
        """How many items the session holds itself."""
        ...


@dataclass
class Session:
    name: str
    store: SessionStore
    created: float  # Epoch seconds.
    last_used: float  # Epoch seconds.
    touched: float  # The registry's clock, for expiry.

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "created": _iso(self.created),
            "last_used": _iso(self.last_used),
            "size": self.store.size(),
        }


def _iso(moment: float) -> str:
    return datetime.datetime.fromtimestamp(moment, datetime.UTC).isoformat(timespec="milliseconds")


class Sessions(Protocol):
    """The live sessions, of this process (`SessionRegistry`) or shared by replicas through Redis.

    The Redis ones are `redis.RedisSessions`.
    """

    ttl: float
    limit: int

    def store(self, name: str) -> SessionStore:
        """The session's store, created on first use. It raises SessionError (429) past the limit."""
        ...

    def sessions(self) -> list[Session]:
        """The live sessions, by name."""
        ...

    def find(self, name: str) -> Session | None: ...

    def remove(self, name: str) -> bool:
        """Forget the session, so its next request starts afresh. False if there was none."""
        ...


def too_many(name: str, live: int, limit: int, ttl: float) -> SessionError:
    return SessionError(
        429,
        f"Session {quote(name)} not created: {live} sessions exist, the limit (--max-sessions) is {limit}."
        f" Delete one (DELETE /__mock__/sessions/NAME) or let idle ones expire (--session-ttl {ttl:g} s).",
    )


class SessionRegistry:
    """The live sessions of this process, least recently used first, so that expiry pops from the front.

    `seed` gives the frozen base every session starts from, built on the first session only."""

    def __init__(
        self,
        seed: Callable[[], MemoryStore],
        ttl: float,
        limit: int,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._seed = seed
        self._base: MemoryStore | None = None
        self.ttl = ttl
        self.limit = limit
        self.clock = clock
        self._sessions: OrderedDict[str, Session] = OrderedDict()
        self._lock = threading.Lock()

    def store(self, name: str) -> SessionStore:
        """The session's store, created on first use. It raises SessionError (429) past the limit."""
        now = self.clock()
        with self._lock:
            self._expire(now)
            session = self._sessions.get(name)
            if session is None:
                if len(self._sessions) >= self.limit:
                    raise too_many(name, len(self._sessions), self.limit, self.ttl)
                if self._base is None:
                    self._base = self._seed()
                wall = time.time()
                session = self._sessions[name] = Session(name, OverlayStore(self._base), wall, wall, now)
            else:
                self._sessions.move_to_end(name)
                session.touched, session.last_used = now, time.time()
            return session.store

    def sessions(self) -> list[Session]:
        """The live sessions, by name."""
        with self._lock:
            self._expire(self.clock())
            return sorted(self._sessions.values(), key=lambda session: session.name)

    def find(self, name: str) -> Session | None:
        with self._lock:
            self._expire(self.clock())
            return self._sessions.get(name)

    def remove(self, name: str) -> bool:
        with self._lock:
            return self._sessions.pop(name, None) is not None

    def _expire(self, now: float) -> None:
        while self._sessions:
            oldest = next(iter(self._sessions.values()))
            if now - oldest.touched < self.ttl:
                return
            del self._sessions[oldest.name]
