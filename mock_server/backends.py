"""Which store the settings select, opened at start, and what is kept beside it.

The store is in memory (the default), or shared in Redis. What is kept beside it is kept the same way.
That is the sessions, the journal, the fault rules, the proxy's violations and the realm's memory
(logins, codes, sessions)."""

from __future__ import annotations

import contextlib
import os
import socket
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mock_server.control.faults.memory import FaultRules
from mock_server.control.journal.base import Journal
from mock_server.control.journal.memory import MemoryJournal
from mock_server.control.mock_sessions.registry import SessionRegistry, Sessions
from mock_server.control.violations.memory import Violations
from mock_server.realm.logins import Memory
from mock_server.settings import MEMORY, Settings
from mock_server.spec.operations import OperationIndex
from mock_server.spec.schemas import Schema
from mock_server.state.fixtures import read_fixtures, record_fields
from mock_server.state.memory import MemoryStore
from mock_server.state.redis.layout import HASH_TAG  # Names only, so it imports no redis.
from mock_server.state.store import Dataset, StateError, Store
from shop_contract.urls import shown

if TYPE_CHECKING:
    import redis

SCHEMES = ("redis://", "rediss://", "unix://")


@dataclass(frozen=True)
class Control:
    """What the admin API reads and changes beside the state, and the layers that fill it."""

    journal: Journal
    faults: FaultRules
    violations: Violations
    per_replica: tuple[str, ...]  # What this replica keeps (docs/platform.md, "Replicas: one state in Redis").
    ready: Callable[[], bool] = lambda: True  # The readiness probe. The data is loaded once the app is built.


def answers(client: redis.Redis) -> Callable[[], bool]:
    """Readiness with a shared state. Redis must answer a PING within `SHARED_TIMEOUT_S`."""
    import redis

    def ready() -> bool:
        try:
            return bool(client.ping())
        except redis.RedisError:
            return False

    return ready


# What stays per replica, as the admin API's health says it. docs/platform.md says why.
IN_THIS_PROCESS = ("everything: the state is in this process (--state memory)",)
PER_REPLICA = (
    "fault rules' probability and delay draws (each replica draws its own; a count is shared)",
    "the journal's newest exchanges until its next event-loop turn (then in Redis)",
    "the dashboard's connection (its stream shows every replica's exchanges)",
)


def open_store(settings: Settings, spec: Schema, dataset: Dataset | None = None) -> Store:
    """The store of `settings.state`, seeded from `dataset`, else from the settings' fixtures.

    The fixtures are checked against `spec`, the served contract.

    A shared state is seeded only by the first replica, so the fixtures are read only then.
    """

    def seed() -> Dataset:
        if dataset is not None:
            return dataset
        return read_fixtures(settings.fixtures, spec) if settings.fixtures else {}

    if settings.state == MEMORY:
        return MemoryStore(record_fields(spec), seed())
    if not settings.state.startswith(SCHEMES):
        raise StateError(f"--state {shown(settings.state)}: expected {MEMORY} or a URL starting {', '.join(SCHEMES)}")
    try:
        from mock_server.state.redis.store import RedisStore  # The redis package is an optional dependency.
    except ImportError:
        raise StateError(
            f"--state {shown(settings.state)}: the redis package is missing (pip install 'shop-contract-suite[redis]')"
        ) from None
    return RedisStore.open(settings.state, record_fields(spec), seed)


def open_sessions(store: Store, settings: Settings) -> Sessions:
    """Sessions over `store`'s seed. They are in this process for the in-memory store, and in Redis for a shared one."""
    if isinstance(store, MemoryStore):
        return SessionRegistry(store.seed_store, settings.session_ttl, settings.max_sessions)
    from mock_server.control.mock_sessions.redis import RedisSessions
    from mock_server.state.redis.store import RedisStore

    if not isinstance(store, RedisStore):
        raise TypeError(f"no sessions for a {type(store).__name__}")
    return RedisSessions(store, settings.session_ttl, settings.max_sessions)


SHARED_TIMEOUT_S = 2.0  # The admin API and the realm answer 503 after this long without Redis, and never hang.
REALM_PREFIX = f"{HASH_TAG}:realm:"  # The realm's maps, under the state's hash tag.


def replica_name(settings: Settings) -> str:
    """This process's name in the journal.

    It is `--replica-name`, with the worker's pid under --workers, else HOST:PID."""
    if settings.replica_name is None:
        return f"{socket.gethostname()}:{os.getpid()}"
    return f"{settings.replica_name}:{os.getpid()}" if settings.workers > 1 else settings.replica_name


def open_control(store: Store, settings: Settings, index: OperationIndex) -> Control:
    """The journal, fault rules and violations.

    They are this process's for the in-memory store. For a shared one they are in Redis, one for all
    replicas."""
    replica = replica_name(settings)
    if isinstance(store, MemoryStore):
        return Control(
            MemoryJournal(settings.journal_size, index, replica), FaultRules(index), Violations(), IN_THIS_PROCESS
        )
    from mock_server.control.faults.redis import RedisFaultRules  # The redis package is an optional dependency.
    from mock_server.control.journal.redis import RedisJournal
    from mock_server.control.violations.redis import RedisViolations

    client = shared_client(settings.state)
    return Control(
        RedisJournal(settings.state, settings.journal_size, index, replica),
        RedisFaultRules(client, settings.state, index, SHARED_TIMEOUT_S),
        RedisViolations(client),
        PER_REPLICA,
        answers(client),
    )


def realm_memory(store: Store, settings: Settings) -> Memory | None:
    """Where the realm keeps logins, codes and sessions. It is None, this process, for the in-memory store."""
    if isinstance(store, MemoryStore):
        return None
    from mock_server.realm.shared import RedisMemory

    return RedisMemory(shared_client(settings.state), REALM_PREFIX)


def shared_client(url: str) -> redis.Redis:
    """A Redis client for what the replicas share beside the state, with its every wait bounded."""
    import redis

    return connected(
        redis.Redis.from_url(url, socket_timeout=SHARED_TIMEOUT_S, socket_connect_timeout=SHARED_TIMEOUT_S)
    )


def connected(client: redis.Redis) -> redis.Redis:
    """`client` with its connection made now, before the replica serves.

    Made during a request, its host name lookup would stop the event loop, and every request with it.
    It would stop for as long as DNS takes, which is seconds with podman's while a container joins the
    network. Redis not answering now is no error here. The client then connects at its first command,
    as it would have."""
    import redis

    with contextlib.suppress(redis.RedisError):
        client.ping()
    return client
