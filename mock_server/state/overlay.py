"""A copy-on-write store, with the changes of one session layered over a frozen `MemoryStore`.

A session starts as the seed state without copying it. Per collection, its store keeps only the rows
it changed. Such a row is a new or updated one, or a tombstone for a deleted one. Per key list, such
as a collection's order or an owner's index, it keeps the keys it added and the base keys it removed,
both sorted. A read merges them with the base's in identifier order. So a page costs
O((changes + page) log n), and a session that only reads holds nothing but its empty dicts.

The base is never written. `reset` drops the changes. `replace_all`, an admin import, builds a new
frozen base from the data set and drops the changes. The domain rules and errors are the same as
`MemoryStore`'s. Every method runs to completion without awaiting, under the session's own lock.
"""

from __future__ import annotations

import bisect
import heapq
import threading
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from mock_server.state.memory import MemoryStore, Row, Table
from mock_server.state.store import (
    COLLECTIONS,
    KEY_FIELDS,
    RELATIONS,
    Dataset,
    InvalidReference,
    Key,
    NotFound,
    Record,
    duplicate,
    has_dependants,
    identifier_change,
    relation_of,
)

TOMBSTONE = None  # A base row the session deleted.


class KeyDelta:
    """A sorted key list of the base, changed. It holds the added keys the base lacks, and the base keys removed."""

    __slots__ = ("added", "removed")

    def __init__(self) -> None:
        self.added: list[Key] = []
        self.removed: list[Key] = []

    def add(self, key: Key, in_base: bool) -> None:
        if in_base:
            _toggle(self.removed, key, present=False)
        else:
            _toggle(self.added, key, present=True)

    def discard(self, key: Key, in_base: bool) -> None:
        if in_base:
            _toggle(self.removed, key, present=True)
        else:
            _toggle(self.added, key, present=False)

    def move(self, key: Key, in_base: bool, present: bool) -> None:
        if present:
            self.add(key, in_base)
        else:
            self.discard(key, in_base)

    def count(self, base: Sequence[Key]) -> int:
        return len(base) - len(self.removed) + len(self.added)

    def page(self, base: Sequence[Key], offset: int, limit: int) -> list[Key]:
        """Keys `offset` to `offset + limit` of the merged list, skipping whole runs of the base."""
        keys: list[Key] = []
        start = 0  # The next base position.
        skip = offset
        changes = heapq.merge([(k, True) for k in self.added], [(k, False) for k in self.removed])
        for key, added in changes:
            end = bisect.bisect_left(base, key, start)
            run = end - start  # The base keys before this change, all kept.
            if skip >= run:
                skip -= run
            else:
                keys += base[start + skip : end][: limit - len(keys)]
                skip = 0
                if len(keys) >= limit:
                    return keys
            start = end
            if not added:
                start += 1  # The removed base key itself.
            elif skip:
                skip -= 1
            else:
                keys.append(key)
                if len(keys) >= limit:
                    return keys
        return keys + list(base[start + skip : start + skip + limit - len(keys)])

    def __bool__(self) -> bool:
        return bool(self.added or self.removed)


def _toggle(keys: list[Key], key: Key, present: bool) -> None:
    """Make `key` present in, or absent from, the sorted list `keys`."""
    at = bisect.bisect_left(keys, key)
    found = at < len(keys) and keys[at] == key
    if present and not found:
        keys.insert(at, key)
    elif not present and found:
        del keys[at]


class OverlayStore:
    """One session's state, which is `base`, frozen and shared, plus this session's changes."""

    def __init__(self, base: MemoryStore) -> None:
        self._lock = threading.RLock()
        self._seed = base
        self._install(base)

    # --- bulk -----------------------------------------------------------------------------------
    def reset(self) -> None:
        self._install(self._seed)

    def replace_all(self, dataset: Dataset) -> None:
        """An import. It makes a new frozen base of its own, built before anything changes, and no changes."""
        self._install(MemoryStore(self.base.fields, dataset))

    def export(self) -> dict[str, list[Record]]:
        with self._lock:
            return {name: self.page(name, 0, self.count(name)) for name in COLLECTIONS}

    def size(self) -> int:
        """How many items this session holds itself. Those are the rows it changed, plus an import's rows."""
        imported = 0 if self.base is self._seed else sum(len(table) for table in self.base.tables.values())
        return imported + sum(len(rows) for rows in self.rows.values())

    # --- reads ----------------------------------------------------------------------------------
    def count(self, collection: str) -> int:
        return self.orders[collection].count(self.base.tables[collection].order)

    def page(self, collection: str, offset: int, limit: int) -> list[Record]:
        with self._lock:
            keys = self.orders[collection].page(self.base.tables[collection].order, offset, limit)
            return self._records(collection, keys)

    def counted_page(self, collection: str, offset: int, limit: int) -> tuple[int, list[Record]]:
        with self._lock:
            return self.count(collection), self.page(collection, offset, limit)

    def get(self, collection: str, key: Key) -> Record:
        with self._lock:
            return self.base.tables[collection].record(self._row(collection, key))

    def owned(self, collection: str, field: str, owner: Key, offset: int, limit: int) -> tuple[int, list[Record]]:
        parent = relation_of(collection, field).parent
        with self._lock:
            self._row(parent, owner)
            base = self.base.indexes[(collection, field)].keys.get(owner, [])
            delta = self.owners[(collection, field)].get(owner)
            if delta is None:
                return len(base), self._records(collection, base[offset : offset + limit])
            return delta.count(base), self._records(collection, delta.page(base, offset, limit))

    # --- writes ---------------------------------------------------------------------------------
    def create(self, collection: str, record: Record) -> Record:
        table = self.base.tables[collection]
        row = table.row(record)
        key = row[table.key_at]
        with self._lock:
            if self._current(collection, key) is not None:
                raise duplicate(collection, key)
            stored = table.record(row)
            self._check_references(collection, stored)
            self._put(collection, key, None, row)
            return stored

    def update(self, collection: str, key: Key, changes: Record) -> Record:
        table = self.base.tables[collection]
        with self._lock:
            current = self._row(collection, key)
            if changes.get(table.key_field, key) != key:
                raise identifier_change(collection, key)
            row = table.row({**table.record(current), **changes})
            updated = table.record(row)
            self._check_references(collection, updated)
            self._put(collection, key, current, row)
            return updated

    def delete(self, collection: str, key: Key) -> None:
        with self._lock:
            current = self._row(collection, key)
            for relation in RELATIONS:
                if relation.parent == collection and self.owned(relation.child, relation.field, key, 0, 1)[0]:
                    raise has_dependants(collection, key, relation.child)
            self._put(collection, key, current, TOMBSTONE)

    # --- consistency ----------------------------------------------------------------------------
    def inconsistencies(self) -> Iterator[str]:
        """The merged state checked as `MemoryStore` checks its own."""
        with self._lock:
            yield from MemoryStore(self.base.fields, self.export()).inconsistencies()
            for name in COLLECTIONS:
                keys = [record[KEY_FIELDS[name]] for record in self.page(name, 0, self.count(name))]
                if keys != sorted(keys):
                    yield f"{name}: merged keys out of order"

    # --- internals ------------------------------------------------------------------------------
    def _install(self, base: MemoryStore) -> None:
        with self._lock:
            self.base = base
            self.rows: dict[str, dict[Key, Row | None]] = {name: {} for name in COLLECTIONS}
            self.orders = {name: KeyDelta() for name in COLLECTIONS}
            self.owners: dict[tuple[str, str], dict[Key, KeyDelta]] = {(r.child, r.field): {} for r in RELATIONS}

    def _current(self, collection: str, key: Key) -> Row | None:
        """The session's row for `key`, or None where there is none."""
        rows = self.rows[collection]
        if key in rows:
            return rows[key]
        return self.base.tables[collection].rows.get(key)

    def _row(self, collection: str, key: Key) -> Row:
        row = self._current(collection, key)
        if row is None:
            raise NotFound(collection, key)
        return row

    def _records(self, collection: str, keys: Iterable[Key]) -> list[Record]:
        table = self.base.tables[collection]
        return [table.record(self._row(collection, key)) for key in keys]

    def _check_references(self, collection: str, record: Record) -> None:
        for relation in RELATIONS:
            if relation.child == collection and self._current(relation.parent, record[relation.field]) is None:
                raise InvalidReference(relation.field, relation.parent, record[relation.field])

    def _put(self, collection: str, key: Key, old: Row | None, new: Row | None) -> None:
        """Record `key`'s new row, None when deleted, and move it in the key lists it belongs to."""
        table: Table = self.base.tables[collection]
        base_row = table.rows.get(key)
        if new == base_row and new is not None:
            self.rows[collection].pop(key, None)  # Back to the base's own row.
        elif new is None and base_row is None:
            self.rows[collection].pop(key, None)  # Created here and deleted here, so nothing is left.
        else:
            self.rows[collection][key] = new
        if (old is None) != (new is None):
            self.orders[collection].move(key, base_row is not None, present=new is not None)
        for relation in RELATIONS:
            if relation.child != collection:
                continue
            at = table.fields.index(relation.field)
            before, after = _field(old, at), _field(new, at)
            if before == after and (old is None) == (new is None):
                continue
            deltas = self.owners[(collection, relation.field)]
            base_owner = _field(base_row, at)
            if old is not None:
                self._move(deltas, before, key, base_row is not None and base_owner == before, present=False)
            if new is not None:
                self._move(deltas, after, key, base_row is not None and base_owner == after, present=True)

    @staticmethod
    def _move(deltas: dict[Key, KeyDelta], owner: Any, key: Key, in_base: bool, present: bool) -> None:
        delta = deltas.setdefault(owner, KeyDelta())
        delta.move(key, in_base, present)
        if not delta:
            del deltas[owner]


def _field(row: Row | None, at: int) -> Any:
    return None if row is None else row[at]
