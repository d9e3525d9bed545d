"""Test sessions shared by replicas. Each is a state of its own in Redis, listed in one registry there.

A session's first request, on any replica, copies the seed to the session's keys. It is one script,
so two replicas that see a new name at once make one session. Its later requests, on any replica,
read and write those keys with the Redis store's scripts. Expiry and the limit are the in-memory
registry's. They are kept in Redis by Redis's clock, so every replica agrees on them. Unlike the
in-memory sessions, a Redis session is a full copy of the seed. Creating one costs a copy of the seed
inside Redis, milliseconds for the default fixtures. Its `size` is every record it holds.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable

import redis

from mock_server.control.mock_sessions.registry import Session, SessionStore, too_many
from mock_server.state.redis import scripts as lua
from mock_server.state.redis.layout import SEED, SESSIONS, SESSIONS_META, session
from mock_server.state.redis.store import RedisStore, answering


class RedisSessions:
    """The `sessions.Sessions` of a Redis store's state."""

    def __init__(self, store: RedisStore, ttl: float, limit: int) -> None:
        self.base = store
        self.ttl = ttl
        self.limit = limit
        self._open = store.client.register_script(lua.SESSION_OPEN)
        self._drop = store.client.register_script(lua.SESSION_DROP)
        self._remove = store.client.register_script(lua.SESSION_REMOVE)
        self._list = store.client.register_script(lua.SESSION_LIST)

    @answering
    def store(self, name: str) -> SessionStore:
        state = session(name)
        answer = self._open(
            keys=[SESSIONS, SESSIONS_META, *SEED.every_key(), *state.every_key()],
            args=[name, round(self.ttl * 1000), self.limit],
        )
        self._forget(answer[1])
        if answer[0] == b"full":
            raise too_many(name, int(answer[2]), self.limit, self.ttl)
        return self.base.over(state)

    @answering
    def sessions(self) -> list[Session]:
        gone, live = self._list(keys=[SESSIONS, SESSIONS_META])
        self._forget(gone)
        pairs = zip(live[::2], live[1::2], strict=True)
        return [self._session(name.decode(), meta) for name, meta in pairs]

    def find(self, name: str) -> Session | None:
        return next((found for found in self.sessions() if found.name == name), None)

    @answering
    def remove(self, name: str) -> bool:
        return bool(self._remove(keys=[SESSIONS, SESSIONS_META, *session(name).every_key()], args=[name]))

    def _session(self, name: str, meta: bytes) -> Session:
        created, _, last_used = meta.decode().partition(":")
        used = int(last_used) / 1000
        return Session(name, self.base.over(session(name)), int(created) / 1000, used, used)

    def _forget(self, names: Iterable[bytes]) -> None:
        """Drop the keys of sessions past their deadline, unless one came back meanwhile.

        It is best effort, because a session created again starts from a fresh copy anyway.
        """
        for name in names:
            with contextlib.suppress(redis.RedisError):
                self._drop(keys=[SESSIONS, *session(name.decode()).every_key()], args=[name])
