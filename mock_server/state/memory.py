"""The in-memory store, the default: tables in identifier order, per-owner indexes, domain rules.

Nothing here knows HTTP or Connexion. Every public method runs to completion without awaiting. So on
the server's single event loop each one is atomic. A lock makes that hold for threads too, such as
tests and admin imports. A method that raises has changed nothing. The state lives and dies with the
process, so it serves one worker only. `mock_server.state.redis.store` is the store that replicas
share.

A record is kept as a row: a tuple of its values in the order of its table's fields. A bulk load keeps
one object per distinct value. At 10^6 products that takes a third of the memory of a dict per
record. Rows are never changed in place, so the seed shares them with the live tables. Every read
builds new dicts, so what a read returns is never a reference into the state.

Keys are kept in order in a `SortedList`, which sortedcontainers keeps as sorted chunks of about a
thousand keys. So a write moves one chunk, not the whole list. Inserting into a plain list moved every
key after the new one. That cost 13 us a POST at 6 x 10^4 products and 0.3 ms at 10^6, twice (the
table's order and the product line's index). The cost grew with every product the store gained
(benchmarks/benchmark-history.md, "The mock's writes as cheap as its reads").

An owner's keys stay a plain list until they are more than `LARGE`. That saves the memory of a data
set with 10^6 owners of one record each.
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, cast

from sortedcontainers import SortedList

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
    duplicate,
    has_dependants,
    identifier_change,
    relation_of,
)

Row = tuple[Any, ...]
POOLED = (str, int)  # The value types a bulk load shares. Exact types, because True must not become 1.
LARGE = 1024  # An owner's keys past this many become a SortedList. Below it, a list inserts as fast.
Keys = Sequence[Key]  # An owner's sorted keys, as a list or a SortedList. Both slice, count and bisect alike.


class Table:
    """Rows by key, and their keys in ascending order, so that a page costs O(page size)."""

    def __init__(self, fields: Sequence[str], key_field: str) -> None:
        self.fields = tuple(fields)
        self.key_field = key_field
        self.key_at = self.fields.index(key_field)
        self.rows: dict[Key, Row] = {}
        self.order: SortedList = SortedList()

    def __len__(self) -> int:
        return len(self.rows)

    def record(self, row: Row) -> Record:
        # A row has the table's fields. No `strict`: a keyword sends zip() down CPython's slow path, which
        # made each record answered half as dear again (0.55 µs against 0.36, twenty of them in a page).
        return dict(zip(self.fields, row))  # noqa: B905

    def row(self, record: Record) -> Row:
        """The fields of the table, in order; one the record lacks is None, one it adds is dropped."""
        return tuple(map(record.get, self.fields))

    def insert(self, row: Row) -> None:
        key = row[self.key_at]
        self.rows[key] = row
        self.order.add(key)

    def remove(self, key: Key) -> None:
        del self.rows[key]
        self.order.remove(key)

    def page(self, offset: int, limit: int) -> list[Record]:
        return [self.record(self.rows[key]) for key in self.order[offset : offset + limit]]


class OwnerIndex:
    """From an owner's key to the sorted keys of the records that name it.

    The keys are a list, or a SortedList past `LARGE`."""

    def __init__(self) -> None:
        self.keys: dict[Key, Keys] = {}

    def add(self, owner: Key, key: Key) -> None:
        keys = self.keys.get(owner)
        if keys is None:
            self.keys[owner] = [key]
        elif isinstance(keys, list):
            bisect.insort(keys, key)
            if len(keys) > LARGE:
                self.keys[owner] = SortedList(keys)
        else:
            cast(SortedList, keys).add(key)

    def discard(self, owner: Key, key: Key) -> None:
        keys = self.keys.get(owner)
        if keys is None:
            return
        if isinstance(keys, list):
            position = bisect.bisect_left(keys, key)
            if position < len(keys) and keys[position] == key:
                del keys[position]
        else:
            cast(SortedList, keys).discard(key)
        if not keys:
            del self.keys[owner]

    def count(self, owner: Key) -> int:
        return len(self.keys.get(owner, ()))

    def page(self, owner: Key, offset: int, limit: int) -> list[Key]:
        return list(self.keys.get(owner, [])[offset : offset + limit])

    def as_lists(self) -> dict[Key, list[Key]]:
        return {owner: list(keys) for owner, keys in self.keys.items()}


class MemoryStore:
    """The mock's whole state, and the seed it was created with, for `reset`.

    `fields` names, per collection, the fields of a record in the order its rows keep them.
    """

    def __init__(self, fields: Mapping[str, Sequence[str]], dataset: Dataset | None = None) -> None:
        self._lock = threading.RLock()
        self.fields = {name: tuple(fields[name]) for name in COLLECTIONS}
        # Per collection, the relations naming a parent, with the parent's position in a row. Then the
        # relations of which it is the parent, where a delete must find no dependant.
        self.links = {
            name: tuple((r, self.fields[name].index(r.field)) for r in RELATIONS if r.child == name)
            for name in COLLECTIONS
        }
        self.dependants = {name: tuple(r for r in RELATIONS if r.parent == name) for name in COLLECTIONS}
        self.tables: dict[str, Table] = {}
        self.indexes: dict[tuple[str, str], OwnerIndex] = {}
        self.replace_all(dataset or {})
        self._seed = {name: [table.rows[key] for key in table.order] for name, table in self.tables.items()}

    # --- bulk -----------------------------------------------------------------------------------
    def replace_all(self, dataset: Dataset) -> None:
        """Swap in a whole data set, read one record at a time in LOAD_ORDER.

        The old state stays until the new one is built. So a reader that raises, on a fixture error,
        changes nothing. A large data set is never held as dicts, because each record becomes a row as
        it is read. Repeated values become one shared object: product lines, vendors, prices, and the
        keys other records name.
        """
        shared: dict[Any, Any] = {}
        rows: dict[str, list[Row]] = {}
        for name in LOAD_ORDER:
            fields = self.fields[name]
            rows[name] = [
                tuple([shared.setdefault(v, v) if type(v) in POOLED else v for v in map(record.get, fields)])
                for record in dataset.get(name, ())
            ]
        self._install(rows)

    def reset(self) -> None:
        """Back to the data set the store was created with."""
        self._install(self._seed)

    def seed_store(self) -> MemoryStore:
        """A store of the seed alone, sharing its rows. It is the frozen base of sessions (state/overlay.py)."""
        store = MemoryStore(self.fields)
        store._install(self._seed)
        store._seed = self._seed
        return store

    def export(self) -> dict[str, list[Record]]:
        with self._lock:
            return {name: table.page(0, len(table)) for name, table in self.tables.items()}

    # --- reads ----------------------------------------------------------------------------------
    def count(self, collection: str) -> int:
        return len(self.tables[collection])

    def page(self, collection: str, offset: int, limit: int) -> list[Record]:
        with self._lock:
            return self.tables[collection].page(offset, limit)

    def counted_page(self, collection: str, offset: int, limit: int) -> tuple[int, list[Record]]:
        with self._lock:
            table = self.tables[collection]
            return len(table), table.page(offset, limit)

    def get(self, collection: str, key: Key) -> Record:
        with self._lock:
            return self._record(collection, key)

    def owned(self, collection: str, field: str, owner: Key, offset: int, limit: int) -> tuple[int, list[Record]]:
        """(count, page) of the `collection` records whose `field` is `owner`. The owner must exist."""
        parent = relation_of(collection, field).parent
        with self._lock:
            self._record(parent, owner)
            index = self.indexes[(collection, field)]
            table = self.tables[collection]
            keys = index.page(owner, offset, limit)
            return index.count(owner), [table.record(table.rows[key]) for key in keys]

    # --- writes ---------------------------------------------------------------------------------
    # Each works on rows, and makes the one dict it returns at the end.
    def create(self, collection: str, record: Record) -> Record:
        table = self.tables[collection]
        row = table.row(record)
        key = row[table.key_at]
        links = self.links[collection]
        with self._lock:
            if key in table.rows:
                raise duplicate(collection, key)
            self._check_references(links, row)
            table.insert(row)
            for relation, at in links:
                self.indexes[(collection, relation.field)].add(row[at], key)
            return table.record(row)

    def update(self, collection: str, key: Key, changes: Record) -> Record:
        """Apply `changes`, all fields for PUT and some for PATCH. The identifier cannot change."""
        table = self.tables[collection]
        links = self.links[collection]
        with self._lock:
            current = self._row(collection, key)
            if changes.get(table.key_field, key) != key:
                raise identifier_change(collection, key)
            row = tuple([changes.get(name, old) for name, old in zip(table.fields, current)])  # noqa: B905 (see record)
            self._check_references(links, row)
            for relation, at in links:
                if current[at] != row[at]:  # An owner's index changes only when the owner does.
                    index = self.indexes[(collection, relation.field)]
                    index.discard(current[at], key)
                    index.add(row[at], key)
            table.rows[key] = row
            return table.record(row)

    def delete(self, collection: str, key: Key) -> None:
        with self._lock:
            current = self._row(collection, key)
            for relation in self.dependants[collection]:
                if self.indexes[(relation.child, relation.field)].count(key):
                    raise has_dependants(collection, key, relation.child)
            for relation, at in self.links[collection]:
                self.indexes[(collection, relation.field)].discard(current[at], key)
            self.tables[collection].remove(key)

    # --- consistency ----------------------------------------------------------------------------
    def inconsistencies(self) -> Iterator[str]:
        """Every way the indexes disagree with the tables. It is empty when the state is sound."""
        with self._lock:
            for name, table in self.tables.items():
                if list(table.order) != sorted(table.rows):
                    yield f"{name}: key order differs from the rows"
                if any(key != row[table.key_at] for key, row in table.rows.items()):
                    yield f"{name}: a row is filed under another key"
            for relation in RELATIONS:
                expected: dict[Key, list[Key]] = {}
                child = self.tables[relation.child]
                at = child.fields.index(relation.field)
                for key in child.order:
                    owner = child.rows[key][at]
                    expected.setdefault(owner, []).append(key)
                    if owner not in self.tables[relation.parent].rows:
                        yield f"{relation.child} {key!r}: {relation.field} {owner!r} does not exist"
                if self.indexes[(relation.child, relation.field)].as_lists() != expected:
                    yield f"index {relation.child}.{relation.field} differs from the rows"

    # --- internals ------------------------------------------------------------------------------
    def _install(self, rows: Mapping[str, Iterable[Row]]) -> None:
        """Build tables and indexes from rows, which are sound and have unique keys, and swap them in."""
        tables: dict[str, Table] = {}
        for name, key_field in KEY_FIELDS.items():
            table = tables[name] = Table(self.fields[name], key_field)
            table.rows = {row[table.key_at]: row for row in rows.get(name, ())}
            table.order = SortedList(table.rows)
        indexes = {(r.child, r.field): OwnerIndex() for r in RELATIONS}
        for relation in RELATIONS:
            owners: dict[Key, list[Key]] = {}
            child = tables[relation.child]
            at = child.fields.index(relation.field)
            for key in child.order:  # Ascending, so each owner's list is built sorted.
                owners.setdefault(child.rows[key][at], []).append(key)
            indexes[(relation.child, relation.field)].keys = {
                owner: SortedList(keys) if len(keys) > LARGE else keys for owner, keys in owners.items()
            }
        with self._lock:
            self.tables, self.indexes = tables, indexes

    def _record(self, collection: str, key: Key) -> Record:
        return self.tables[collection].record(self._row(collection, key))

    def _row(self, collection: str, key: Key) -> Row:
        try:
            return self.tables[collection].rows[key]
        except KeyError:
            raise NotFound(collection, key) from None

    def _check_references(self, links: Iterable[tuple[Relation, int]], row: Row) -> None:
        for relation, at in links:
            if row[at] not in self.tables[relation.parent].rows:
                raise InvalidReference(relation.field, relation.parent, row[at])
