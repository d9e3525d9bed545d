"""The state in Redis (or Valkey), shared by every replica that names the same server and database.

Each operation is one Lua script of `scripts.py`, over the keys of `layout.py`. Reads are scripts
too, so a page is one consistent snapshot. The domain rules and error messages are those of the
in-memory store. The first replica to start seeds the state, under a lock, from fixtures it reads
only then. It keeps the seed in Redis for a reset. A replica that finds the state seeded joins it
without reading any fixture. A bulk load (seed, import) is written to staging keys and swapped in by
one script, so no replica ever sees half of it.

The client is redis-py's synchronous one. A store call is one round trip that the event loop waits
for, as the in-memory store's calls are plain function calls. Reads are answered from the replica's
`LocalCopy` while Redis reports no change to the live state. Writes always go to Redis, and read the
rows they compare against from Redis, never from the copy.

A page is asked for by rank, which Redis reads as a 64-bit integer. A rank past any collection Redis
could hold is asked for as `MAX_RANK`. So every page past the last, however large its number, is an
empty page (404, as in memory), never a Redis error. A Redis error is logged whole, because a
script's SHA and line are for the operator. It is answered with one stable message (`unavailable`).

Long because it is one class, the `Store` protocol over Redis, as `memory.MemoryStore` is over a
dict. Every operation is a method over the same client, local copy and key layout. What stands
apart already is apart: the scripts (`scripts.py`), the key layout (`layout.py`) and the local
copy (`copy.py`).
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import logging
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from copy import copy as shallow_copy
from typing import Any, ParamSpec, TypeVar

import orjson
import redis

from mock_server.ops.instruments import REDIS_ERRORS, REDIS_LATENCY
from mock_server.spec.quoting import cut
from mock_server.state.redis import scripts as lua
from mock_server.state.redis.copy import LocalCopy, NoCopy
from mock_server.state.redis.layout import (
    LIVE,
    SEED,
    SEEDED,
    SEEDING,
    SHARED,
    State,
    owner_prefix,
    reference_token,
    snapshot,
    staging,
    token,
)
from mock_server.state.store import (
    COLLECTIONS,
    KEY_FIELDS,
    LOAD_ORDER,
    RELATIONS,
    Dataset,
    InvalidReference,
    Key,
    NotFound,
    Record,
    Relation,
    StateError,
    StateUnavailable,
    duplicate,
    has_dependants,
    identifier_change,
    relation_of,
)
from shop_contract.urls import shown

BATCH = 10_000  # records per round trip of a bulk load or an export
STAGING_TTL_MS = 3_600_000  # a bulk load or snapshot left by a replica that died disappears after an hour
LOCK_TTL_MS = 30_000  # the seeding lock outlives a dead seeder by this much; a live one renews it
WAIT_S = 0.05
MAX_RANK = 2**53 - 1  # no Redis holds this many members; exact as a Lua number, within Redis's integers
UNAVAILABLE = "The shared state did not answer."  # all a client is told of a Redis failure
log = logging.getLogger("mock_server.state")


P = ParamSpec("P")
T = TypeVar("T")


def unavailable(error: redis.RedisError, call: str) -> StateUnavailable:
    """The domain error (503) that a Redis failure during a request becomes. Its detail is `UNAVAILABLE`.

    The failure itself is logged: a script's SHA and line, a key of the wrong type, a lost connection.
    It is counted as a failure of `call`, a store method or the part of the mock that called."""
    REDIS_ERRORS.labels(call).inc()
    outage = isinstance(error, redis.ConnectionError | redis.TimeoutError)  # Else a script's or a command's error.
    level = logging.WARNING if outage else logging.ERROR
    log.log(level, "The shared state failed: %s: %s", type(error).__name__, cut(str(error)))
    return StateUnavailable(UNAVAILABLE)


def answering(method: Callable[P, T]) -> Callable[P, T]:
    """A Redis failure during a request as a domain error (503), not a traceback.

    Each call is timed and each failure counted (`ops.instruments`)."""

    name = method.__name__
    latency = REDIS_LATENCY.labels(name)

    @functools.wraps(method)
    def call(*args: P.args, **kwargs: P.kwargs) -> T:
        started = time.perf_counter()
        try:
            return method(*args, **kwargs)
        except redis.RedisError as error:
            raise unavailable(error, name) from None
        finally:
            latency.observe(time.perf_counter() - started)

    return call


def ranks(offset: int, limit: int) -> tuple[int, int]:
    """The first and last rank of a page (limit > 0), each at most `MAX_RANK`, which is past every member anyway."""
    return min(offset, MAX_RANK), min(offset + limit - 1, MAX_RANK)


class RedisStore:
    """`Store` over one Redis database; open it with `RedisStore.open`."""

    def __init__(self, url: str, fields: Mapping[str, Sequence[str]]) -> None:
        # Requests get redis-py's timeouts (5 s). Bulk work (seed, import, reset, export) may take
        # minutes at 10^6 records, with Redis busy running one script, so it has no read timeout.
        self.client = client = redis.Redis.from_url(url)
        self.bulk = bulk = redis.Redis.from_url(url, socket_timeout=None)
        self.fields = {name: tuple(fields[name]) for name in COLLECTIONS}
        self._key_at = {name: self.fields[name].index(KEY_FIELDS[name]) for name in COLLECTIONS}
        self._references = {name: [r for r in RELATIONS if r.child == name] for name in COLLECTIONS}
        self._dependants = {name: [r for r in RELATIONS if r.parent == name] for name in COLLECTIONS}
        self._create = client.register_script(lua.CREATE)
        self._update = client.register_script(lua.UPDATE)
        self._delete = client.register_script(lua.DELETE)
        self._page = client.register_script(lua.PAGE)
        self._owned = client.register_script(lua.OWNED)
        self._seed = bulk.register_script(lua.SEED)
        self._replace = bulk.register_script(lua.REPLACE)
        self.state = LIVE
        self.copy: LocalCopy | NoCopy = LocalCopy(url, LIVE.prefix)

    @classmethod
    def open(cls, url: str, fields: Mapping[str, Sequence[str]], seed: Callable[[], Dataset]) -> RedisStore:
        """Join the state at `url`, seeding it from `seed()` if no replica has yet.

        Replicas that start together race for a lock (SET NX); the others wait for the marker the
        winner sets. A lock left by a seeder that died expires, and the next replica seeds.
        """
        try:
            store = cls(url, fields)
            store._join(url, seed)
            store.client.ping()  # connected now, not during a request (backends.connected)
        except (ValueError, redis.RedisError) as error:
            raise StateError(f"--state {shown(url)}: {error}") from None
        return store

    def over(self, state: State) -> RedisStore:
        """This store over another state's keys (a session's): the same connections and scripts, no copy."""
        other = shallow_copy(self)
        other.state, other.copy = state, NoCopy()
        return other

    @answering
    def size(self) -> int:
        """Every record of this state."""
        pipe = self.client.pipeline(transaction=False)
        for name in COLLECTIONS:
            pipe.zcard(self.state.order(name))
        return sum(int(count) for count in pipe.execute())

    def shared(self, name: str, value: bytes, replace: bool = False) -> bytes:
        """The value every replica of this state uses under `name`: the first one set (`value` if none
        was, or with `replace`). Outside the state: reset and import leave it alone."""
        try:
            self.bulk.set(SHARED + name, value, nx=not replace)
            stored = self.bulk.get(SHARED + name)
        except redis.RedisError as error:
            raise StateError(f"cannot share {name} through Redis: {error}") from None
        return stored if isinstance(stored, bytes) else value

    def _join(self, url: str, seed: Callable[[], Dataset]) -> None:
        client = self.bulk
        layout = orjson.dumps(self.fields, option=orjson.OPT_SORT_KEYS)
        me = uuid.uuid4().hex
        while True:
            seeded = client.get(SEEDED)
            if seeded is not None:
                if seeded != layout:
                    raise StateError(
                        f"--state {shown(url)}: this database holds a state with another record layout "
                        "(written by another version of the mock); use another database, or empty it"
                    )
                return
            if client.set(SEEDING, me, nx=True, px=LOCK_TTL_MS):
                try:
                    if client.exists(SEEDED):  # A seeder ended between our read of it and our lock.
                        continue
                    target = self._write(seed(), staging(me), renew=True)
                    self._seed(keys=[SEEDED, *target.every_key(), *SEED.every_key(), *LIVE.every_key()], args=[layout])
                finally:
                    if client.get(SEEDING) == me.encode():
                        client.delete(SEEDING)
            else:
                time.sleep(WAIT_S)

    # --- bulk -----------------------------------------------------------------------------------
    @answering
    def replace_all(self, dataset: Dataset) -> None:
        """Write the data set to staging keys, then swap them in with one script: all or nothing."""
        target = self._write(dataset, staging(uuid.uuid4().hex))
        with self._writing():
            self._replace(keys=[*target.every_key(), *self.state.every_key()], args=["move", 0])

    @answering
    def reset(self) -> None:
        with self._writing():
            self._replace(keys=[*SEED.every_key(), *self.state.every_key()], args=["copy", 0])

    @answering
    def export(self) -> dict[str, list[Record]]:
        with self._snapshot() as state:
            return {name: list(self._records(state, name)) for name in COLLECTIONS}

    # --- reads ----------------------------------------------------------------------------------
    @answering
    def count(self, collection: str) -> int:
        return self.copy.read(("count", collection), lambda: int(self.client.zcard(self.state.order(collection))))

    @answering
    def page(self, collection: str, offset: int, limit: int) -> list[Record]:
        return self.counted_page(collection, offset, limit)[1]

    @answering
    def counted_page(self, collection: str, offset: int, limit: int) -> tuple[int, list[Record]]:
        """One script: the count and the page of one moment, in one round trip."""
        if limit <= 0:
            return self.count(collection), []
        keys = [self.state.order(collection), self.state.rows(collection)]
        count, rows = self.copy.read(
            ("page", collection, offset, limit),
            lambda: tuple(self._page(keys=keys, args=list(ranks(offset, limit)))),
            records=lambda answer: len(answer[1]) + 1,
        )
        return int(count), [self._record(collection, row) for row in rows]

    @answering
    def get(self, collection: str, key: Key) -> Record:
        try:
            key_token = token(key)
        except (TypeError, ValueError):
            raise NotFound(collection, key) from None
        raw = self.copy.read(("row", collection, key_token), lambda: self._row(collection, key_token))
        if raw is None:
            raise NotFound(collection, key)
        return self._record(collection, raw)

    @answering
    def owned(self, collection: str, field: str, owner: Key, offset: int, limit: int) -> tuple[int, list[Record]]:
        relation = relation_of(collection, field)
        owner_token = reference_token(owner)
        answer = self.copy.read(
            ("owned", collection, field, owner_token, offset, limit),
            lambda: self._owned(
                keys=[self.state.rows(relation.parent), self.state.index(relation), self.state.rows(collection)],
                args=[owner_token, owner_prefix(owner_token), ranks(offset, limit)[0], limit],
            ),
            records=lambda answer: len(answer[1]) + 1 if answer else 1,
        )
        if not answer:
            raise NotFound(relation.parent, owner)
        count, rows = answer
        return int(count), [self._record(collection, row) for row in rows]

    # --- writes ---------------------------------------------------------------------------------
    @answering
    def create(self, collection: str, record: Record) -> Record:
        row = self._new_row(collection, record)
        key = row[self._key_at[collection]]
        stored = dict(zip(self.fields[collection], row, strict=True))
        key_token = token(key)
        references = self._references[collection]
        keys = [self.state.rows(collection), self.state.order(collection)]
        args: list[bytes] = [key_token, orjson.dumps(row)]
        for relation in references:
            parent_token = reference_token(stored[relation.field])
            keys += [self.state.rows(relation.parent), self.state.index(relation)]
            args += [parent_token, owner_prefix(parent_token) + key_token]
        with self._writing():
            answer = self._create(keys=keys, args=args)
        if answer[0] == b"duplicate":
            raise duplicate(collection, key)
        self._check(answer, collection, key, references, stored)
        return stored

    @answering
    def update(self, collection: str, key: Key, changes: Record) -> Record:
        key_field = KEY_FIELDS[collection]
        references = self._references[collection]
        key_token = token(key)
        while True:
            raw, current = self._current(collection, key, key_token)
            if changes.get(key_field, key) != key:
                raise identifier_change(collection, key)
            row = self._new_row(collection, {**current, **changes})
            updated = dict(zip(self.fields[collection], row, strict=True))
            keys = [self.state.rows(collection)]
            args: list[bytes] = [key_token, raw, orjson.dumps(row)]
            for relation in references:
                old, new = reference_token(current[relation.field]), reference_token(updated[relation.field])
                keys += [self.state.rows(relation.parent), self.state.index(relation)]
                args += [new, owner_prefix(old) + key_token, owner_prefix(new) + key_token]
            with self._writing():
                answer = self._update(keys=keys, args=args)
            if answer[0] != b"changed":
                self._check(answer, collection, key, references, updated)
                return updated

    @answering
    def delete(self, collection: str, key: Key) -> None:
        references, dependants = self._references[collection], self._dependants[collection]
        key_token = token(key)
        while True:
            raw, current = self._current(collection, key, key_token)
            keys = [
                self.state.rows(collection),
                self.state.order(collection),
                *(self.state.index(r) for r in references),
                *(self.state.index(r) for r in dependants),
            ]
            members = [owner_prefix(reference_token(current[r.field])) + key_token for r in references]
            args: list[bytes | int] = [key_token, raw, len(members), *members, owner_prefix(key_token)]
            with self._writing():
                answer = self._delete(keys=keys, args=args)
            if answer[0] == b"dependants":
                raise has_dependants(collection, key, dependants[int(answer[1]) - 1].child)
            if answer[0] != b"changed":
                self._check(answer, collection, key, references, current)
                return

    # --- consistency ----------------------------------------------------------------------------
    def inconsistencies(self) -> Iterator[str]:
        """Every way the indexes disagree with the records, read in one transaction (MULTI/EXEC)."""
        pipe = self.bulk.pipeline(transaction=True)
        for name in COLLECTIONS:
            pipe.hgetall(self.state.rows(name))
            pipe.zrange(self.state.order(name), 0, -1)
        for relation in RELATIONS:
            pipe.zrange(self.state.index(relation), 0, -1)
        answers = iter(pipe.execute())
        problems = []
        tokens: dict[str, set[bytes]] = {}
        records: dict[str, list[Record]] = {}
        for name in COLLECTIONS:
            rows: dict[bytes, bytes] = next(answers)
            order: list[bytes] = next(answers)
            tokens[name] = set(rows)
            records[name] = [self._record(name, row) for row in rows.values()]
            keys = [self._record(name, rows[at])[KEY_FIELDS[name]] for at in order if at in rows]
            if set(order) != set(rows) or keys != sorted(keys):
                problems.append(f"{name}: key order differs from the rows")
            if any(token(self._record(name, row)[KEY_FIELDS[name]]) != at for at, row in rows.items()):
                problems.append(f"{name}: a row is filed under another key")
        for relation in RELATIONS:
            expected = set()
            for record in records[relation.child]:
                owner = reference_token(record[relation.field])
                key = record[KEY_FIELDS[relation.child]]
                expected.add(owner_prefix(owner) + token(key))
                if owner not in tokens[relation.parent]:
                    owner_key = record[relation.field]
                    problems.append(f"{relation.child} {key!r}: {relation.field} {owner_key!r} does not exist")
            if set(next(answers)) != expected:
                problems.append(f"index {relation.child}.{relation.field} differs from the rows")
        return iter(problems)

    # --- internals ------------------------------------------------------------------------------
    @contextlib.contextmanager
    def _writing(self) -> Iterator[None]:
        """A write of this replica: its copy goes at once, whatever the write did (or if its answer was lost)."""
        try:
            yield
        finally:
            self.copy.drop()

    def _row(self, collection: str, key_token: bytes) -> bytes | None:
        row: bytes | None = self.client.hget(self.state.rows(collection), key_token)  # type: ignore[assignment]
        return row

    def _current(self, collection: str, key: Key, key_token: bytes) -> tuple[bytes, Record]:
        """The stored row (what a write's script compares against) and its record; NotFound if none."""
        raw = self._row(collection, key_token)
        if raw is None:
            raise NotFound(collection, key)
        return raw, self._record(collection, raw)

    def _record(self, collection: str, row: bytes | str) -> Record:
        return dict(zip(self.fields[collection], orjson.loads(row), strict=True))

    def _new_row(self, collection: str, record: Record) -> list[Any]:
        """The fields of the collection, in order; one the record lacks is None, one it adds is dropped."""
        return [record.get(name) for name in self.fields[collection]]

    @staticmethod
    def _check(answer: list[Any], collection: str, key: Key, references: list[Relation], record: Record) -> None:
        """Raise the domain error a script's answer names (the caller handles the others)."""
        if answer[0] == b"missing":
            raise NotFound(collection, key)
        if answer[0] == b"invalid":
            relation = references[int(answer[1]) - 1]
            raise InvalidReference(relation.field, relation.parent, record[relation.field])

    def _write(self, dataset: Dataset, state: State, renew: bool = False) -> State:
        """Write `dataset` to the keys of `state` (expiring), a batch of records per round trip.

        `renew`: keep the seeding lock alive, batch by batch, while a large seed is written. A data
        set that fails part way (a fixture error) leaves no keys behind.
        """
        self.bulk.delete(*state.every_key())
        try:
            for name in LOAD_ORDER:
                self._write_collection(name, dataset.get(name, ()), state, renew)
        except BaseException:
            self.bulk.delete(*state.every_key())
            raise
        return state

    def _write_collection(self, name: str, records: Iterable[Record], state: State, renew: bool) -> None:
        fields, at = self.fields[name], self._key_at[name]
        references = [(state.index(r), fields.index(r.field)) for r in self._references[name]]
        remaining = iter(records)
        while batch := list(itertools.islice(remaining, BATCH)):
            rows: dict[bytes, bytes] = {}
            indexes: dict[str, dict[bytes, int]] = {index: {} for index, _ in references}
            for record in batch:
                row: list[Any] = [record.get(field) for field in fields]
                key_token = token(row[at])
                rows[key_token] = orjson.dumps(row)
                for index, field_at in references:
                    indexes[index][owner_prefix(reference_token(row[field_at])) + key_token] = 0
            pipe = self.bulk.pipeline(transaction=False)
            pipe.hset(state.rows(name), mapping=rows)  # type: ignore[arg-type]
            pipe.zadd(state.order(name), dict.fromkeys(rows, 0))
            for index, members in indexes.items():
                pipe.zadd(index, members)
            for key in state.every_key():
                pipe.pexpire(key, STAGING_TTL_MS)
            if renew:
                pipe.pexpire(SEEDING, LOCK_TTL_MS)
            pipe.execute()

    @contextlib.contextmanager
    def _snapshot(self) -> Iterator[State]:
        """A copy of the live state, taken by one script, read at leisure, then dropped."""
        state = snapshot(uuid.uuid4().hex)
        self._replace(keys=[*self.state.every_key(), *state.every_key()], args=["copy", STAGING_TTL_MS])
        try:
            yield state
        finally:
            self.bulk.delete(*state.every_key())

    def _records(self, state: State, collection: str) -> Iterable[Record]:
        for start in range(0, int(self.bulk.zcard(state.order(collection))), BATCH):
            tokens: list[bytes] = self.bulk.zrange(state.order(collection), start, start + BATCH - 1)  # type: ignore[assignment]
            rows: list[bytes] = self.bulk.hmget(state.rows(collection), tokens) if tokens else []  # type: ignore[assignment]
            yield from (self._record(collection, row) for row in rows)
