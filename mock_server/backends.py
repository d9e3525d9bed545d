"""Which store the settings select, opened at start: in memory (the default), or shared in Redis;
and the sessions over it."""

from __future__ import annotations

from mock_server.control.sessions.registry import SessionRegistry, Sessions
from mock_server.settings import MEMORY, Settings
from mock_server.spec.schemas import Schema
from mock_server.state.fixtures import read_fixtures, record_fields
from mock_server.state.memory import MemoryStore
from mock_server.state.store import Dataset, StateError, Store

SCHEMES = ("redis://", "rediss://", "unix://")


def open_store(settings: Settings, spec: Schema, dataset: Dataset | None = None) -> Store:
    """The store of `settings.state`, seeded from `dataset`, else from the settings' fixtures (checked
    against `spec`, the served contract).

    A shared state is seeded only by the first replica: the fixtures are read only then.
    """

    def seed() -> Dataset:
        if dataset is not None:
            return dataset
        return read_fixtures(settings.fixtures, spec) if settings.fixtures else {}

    if settings.state == MEMORY:
        return MemoryStore(record_fields(spec), seed())
    if not settings.state.startswith(SCHEMES):
        raise StateError(f"--state {settings.state}: expected {MEMORY} or a URL starting {', '.join(SCHEMES)}")
    try:
        from mock_server.state.redis.store import RedisStore  # the redis package is an optional dependency
    except ImportError:
        raise StateError(
            f"--state {settings.state}: the redis package is missing (pip install 'shop-contract-suite[redis]')"
        ) from None
    return RedisStore.open(settings.state, record_fields(spec), seed)


def open_sessions(store: Store, settings: Settings) -> Sessions:
    """Sessions over `store`'s seed: in this process for the in-memory store, shared in Redis for a shared one."""
    if isinstance(store, MemoryStore):
        return SessionRegistry(store.seed_store, settings.session_ttl, settings.max_sessions)
    from mock_server.control.sessions.redis import RedisSessions
    from mock_server.state.redis.store import RedisStore

    if not isinstance(store, RedisStore):
        raise TypeError(f"no sessions for a {type(store).__name__}")
    return RedisSessions(store, settings.session_ttl, settings.max_sessions)
