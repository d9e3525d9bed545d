"""In-memory state of the mock: tables in identifier order, per-owner indexes, domain rules.

Nothing here knows HTTP or Connexion. Every public method runs to completion without awaiting, so on
the server's single event loop each one is atomic; a lock makes that hold for threads too (tests,
admin imports). A method that raises has changed nothing. Records are flat (every value is a str, an
int or None), so `dict(record)` is a full copy: what a read returns is never a reference into the
state. `replace_all` takes its records as they are, which is safe because no record is ever changed
in place.
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

Key = str | int
Record = dict[str, Any]
Dataset = dict[str, list[Record]]

# collection -> the field that identifies a record of it
KEY_FIELDS: dict[str, str] = {
    "productlines": "productline",
    "products": "productcode",
    "orderdetails": "id",
    "customers": "customernumber",
    "orders": "ordernumber",
    "payments": "id",
}
COLLECTIONS = tuple(KEY_FIELDS)


@dataclass(frozen=True)
class Relation:
    """`child[field]` names a record of `parent`: an owner index, a reference that must hold."""

    child: str
    field: str
    parent: str


RELATIONS = (
    Relation("products", "productline", "productlines"),
    Relation("orderdetails", "productcode", "products"),
    Relation("orderdetails", "ordernumber", "orders"),
    Relation("orders", "customernumber", "customers"),
    Relation("payments", "customernumber", "customers"),
)


class StoreError(Exception):
    """Base of the domain errors; rendered once, at the HTTP edge."""


class NotFound(StoreError):
    def __init__(self, collection: str, key: Key) -> None:
        super().__init__(f"No {collection.removesuffix('s')} with {KEY_FIELDS[collection]} {key!r}.")
        self.collection = collection
        self.key = key


class Conflict(StoreError):
    """The request is at odds with the current state (duplicate, dependants, identifier change)."""


class InvalidReference(StoreError):
    """A field names a record that does not exist."""

    def __init__(self, field: str, parent: str, value: Key) -> None:
        super().__init__(f"No {parent.removesuffix('s')} with {KEY_FIELDS[parent]} {value!r}.")
        self.field = field


class Table:
    """Records by key, and their keys in ascending order, so that a page costs O(page size)."""

    def __init__(self, key_field: str) -> None:
        self.key_field = key_field
        self.rows: dict[Key, Record] = {}
        self.order: list[Key] = []

    def __len__(self) -> int:
        return len(self.rows)

    def insert(self, record: Record) -> None:
        key = record[self.key_field]
        self.rows[key] = record
        bisect.insort(self.order, key)

    def remove(self, key: Key) -> None:
        del self.rows[key]
        del self.order[bisect.bisect_left(self.order, key)]

    def page(self, offset: int, limit: int) -> list[Record]:
        return [self.rows[key] for key in self.order[offset : offset + limit]]


class OwnerIndex:
    """owner key -> the sorted keys of the records that name it."""

    def __init__(self) -> None:
        self.keys: dict[Key, list[Key]] = {}

    def add(self, owner: Key, key: Key) -> None:
        bisect.insort(self.keys.setdefault(owner, []), key)

    def discard(self, owner: Key, key: Key) -> None:
        keys = self.keys.get(owner)
        if keys is None:
            return
        position = bisect.bisect_left(keys, key)
        if position < len(keys) and keys[position] == key:
            del keys[position]
        if not keys:
            del self.keys[owner]

    def count(self, owner: Key) -> int:
        return len(self.keys.get(owner, ()))

    def page(self, owner: Key, offset: int, limit: int) -> list[Key]:
        return self.keys.get(owner, [])[offset : offset + limit]


class Store:
    """The mock's whole state. Records are plain dicts in the shape the API returns."""

    def __init__(self, dataset: Dataset | None = None) -> None:
        self._lock = threading.RLock()
        self.tables: dict[str, Table] = {}
        self.indexes: dict[tuple[str, str], OwnerIndex] = {}
        self.replace_all(dataset or {})

    # --- bulk -----------------------------------------------------------------------------------
    def replace_all(self, dataset: Dataset) -> None:
        """Swap in a whole data set (already validated): the old state stays until it is built.

        The records are taken, not copied: the store never changes a record in place (writes put a
        new dict), so the caller's data set (the admin's seed) stays as it was, and a big data set
        is not held twice (copying 10^6 products cost about 0.8 GB and several seconds).
        """
        tables = {name: Table(field) for name, field in KEY_FIELDS.items()}
        indexes = {(r.child, r.field): OwnerIndex() for r in RELATIONS}
        for name, table in tables.items():
            records = sorted(dataset.get(name, []), key=lambda r: r[table.key_field])
            table.rows = {r[table.key_field]: r for r in records}
            table.order = list(table.rows)
        for relation in RELATIONS:
            index = indexes[(relation.child, relation.field)]
            child = tables[relation.child]
            for key in child.order:  # ascending, so each owner's list is built sorted
                index.keys.setdefault(child.rows[key][relation.field], []).append(key)
        with self._lock:
            self.tables, self.indexes = tables, indexes

    def export(self) -> Dataset:
        with self._lock:
            return {name: _copies(table.page(0, len(table))) for name, table in self.tables.items()}

    # --- reads ----------------------------------------------------------------------------------
    def count(self, collection: str) -> int:
        return len(self.tables[collection])

    def page(self, collection: str, offset: int, limit: int) -> list[Record]:
        with self._lock:
            return _copies(self.tables[collection].page(offset, limit))

    def get(self, collection: str, key: Key) -> Record:
        with self._lock:
            return dict(self._row(collection, key))

    def owned(self, collection: str, field: str, owner: Key, offset: int, limit: int) -> tuple[int, list[Record]]:
        """(count, page) of the `collection` records whose `field` is `owner`; the owner must exist."""
        relation = self._relation(collection, field)
        with self._lock:
            self._row(relation.parent, owner)
            index = self.indexes[(collection, field)]
            rows = self.tables[collection].rows
            keys = index.page(owner, offset, limit)
            return index.count(owner), [dict(rows[key]) for key in keys]

    # --- writes ---------------------------------------------------------------------------------
    def create(self, collection: str, record: Record) -> Record:
        table = self.tables[collection]
        key = record[table.key_field]
        with self._lock:
            if key in table.rows:
                raise Conflict(f"{table.key_field} {key!r} exists already.")
            self._check_references(collection, record)
            stored = dict(record)
            table.insert(stored)
            self._index(collection, stored)
            return dict(stored)

    def update(self, collection: str, key: Key, changes: Record) -> Record:
        """Apply `changes` (all fields for PUT, some for PATCH); the identifier cannot change."""
        table = self.tables[collection]
        with self._lock:
            current = self._row(collection, key)
            if changes.get(table.key_field, key) != key:
                raise Conflict(f"{table.key_field} cannot be changed ({key!r} in the path).")
            updated = {**current, **changes}
            self._check_references(collection, updated)
            self._unindex(collection, current)
            table.rows[key] = updated
            self._index(collection, updated)
            return dict(updated)

    def delete(self, collection: str, key: Key) -> None:
        with self._lock:
            current = self._row(collection, key)
            for relation in RELATIONS:
                if relation.parent == collection and self.indexes[(relation.child, relation.field)].count(key):
                    raise Conflict(f"{KEY_FIELDS[collection]} {key!r} still has {relation.child}.")
            self._unindex(collection, current)
            self.tables[collection].remove(key)

    # --- consistency ----------------------------------------------------------------------------
    def inconsistencies(self) -> Iterator[str]:
        """Every way the indexes disagree with the tables (empty when the state is sound)."""
        with self._lock:
            for name, table in self.tables.items():
                if table.order != sorted(table.rows):
                    yield f"{name}: key order differs from the rows"
            for relation in RELATIONS:
                expected: dict[Key, list[Key]] = {}
                child = self.tables[relation.child]
                for key in child.order:
                    owner = child.rows[key][relation.field]
                    expected.setdefault(owner, []).append(key)
                    if owner not in self.tables[relation.parent].rows:
                        yield f"{relation.child} {key!r}: {relation.field} {owner!r} does not exist"
                if self.indexes[(relation.child, relation.field)].keys != expected:
                    yield f"index {relation.child}.{relation.field} differs from the rows"

    # --- internals ------------------------------------------------------------------------------
    def _row(self, collection: str, key: Key) -> Record:
        try:
            return self.tables[collection].rows[key]
        except KeyError:
            raise NotFound(collection, key) from None

    @staticmethod
    def _relation(collection: str, field: str) -> Relation:
        return next(r for r in RELATIONS if (r.child, r.field) == (collection, field))

    def _check_references(self, collection: str, record: Record) -> None:
        for relation in self._relations_of(collection):
            value = record[relation.field]
            if value not in self.tables[relation.parent].rows:
                raise InvalidReference(relation.field, relation.parent, value)

    def _index(self, collection: str, record: Record) -> None:
        key = record[KEY_FIELDS[collection]]
        for relation in self._relations_of(collection):
            self.indexes[(collection, relation.field)].add(record[relation.field], key)

    def _unindex(self, collection: str, record: Record) -> None:
        key = record[KEY_FIELDS[collection]]
        for relation in self._relations_of(collection):
            self.indexes[(collection, relation.field)].discard(record[relation.field], key)

    @staticmethod
    def _relations_of(collection: str) -> Iterable[Relation]:
        return (r for r in RELATIONS if r.child == collection)


def _copies(records: list[Record]) -> list[Record]:
    return [dict(record) for record in records]
