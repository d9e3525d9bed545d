"""What the mock's state is and may do: the collections, their relations, the domain errors and `Store`.

Two stores implement `Store`:

- `memory.MemoryStore` is the default, in one process.
- `redis.store.RedisStore` serves `--state redis://...`. Replicas on one or several machines share it.

Handlers, the fast path, the admin API and fixture loading know only this interface. They call the
store's methods directly, so there is no layer in between on the hot path.

Nothing here knows HTTP or Connexion. Every operation is atomic, so one that raises has changed
nothing. The domain errors carry the same messages whatever the store.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from mock_server.spec.quoting import quote

Key = str | int
Record = dict[str, Any]
Dataset = Mapping[str, Iterable[Record]]

# It maps a collection to the field that identifies a record of it.
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
    """`child[field]` names a record of `parent`. It is an owner index, and a reference that must hold."""

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


def _parents_first() -> tuple[str, ...]:
    order: list[str] = []
    while len(order) < len(COLLECTIONS):
        order += [
            name
            for name in COLLECTIONS
            if name not in order and all(r.parent in order for r in RELATIONS if r.child == name)
        ]
    return tuple(order)


# The order in which a bulk load reads the collections. Every parent comes before its children, so a
# reader can check references as it goes.
LOAD_ORDER = _parents_first()


def relation_of(collection: str, field: str) -> Relation:
    """The relation in which `collection` records name a parent by `field`."""
    return next(r for r in RELATIONS if (r.child, r.field) == (collection, field))


class StoreError(Exception):
    """The base of the domain errors. They are rendered once, at the HTTP edge."""


class NotFound(StoreError):
    def __init__(self, collection: str, key: Key) -> None:
        super().__init__(f"No {collection.removesuffix('s')} with {KEY_FIELDS[collection]} {quote(key)}.")
        self.collection = collection
        self.key = key


class Conflict(StoreError):
    """The request is at odds with the current state, by a duplicate, dependants or an identifier change."""


class InvalidReference(StoreError):
    """A field names a record that does not exist."""

    def __init__(self, field: str, parent: str, value: Key) -> None:
        super().__init__(f"No {parent.removesuffix('s')} with {KEY_FIELDS[parent]} {quote(value)}.")
        self.field = field


class StateUnavailable(StoreError):
    """A shared state's server did not answer, and nothing is known to have changed (503)."""


class StateError(Exception):
    """The state cannot be opened. Its server is unreachable, or it was written with another record layout."""


def duplicate(collection: str, key: Key) -> Conflict:
    return Conflict(f"{KEY_FIELDS[collection]} {quote(key)} exists already.")


def identifier_change(collection: str, key: Key) -> Conflict:
    return Conflict(f"{KEY_FIELDS[collection]} cannot be changed ({quote(key)} in the path).")


def has_dependants(collection: str, key: Key, child: str) -> Conflict:
    return Conflict(f"{KEY_FIELDS[collection]} {quote(key)} still has {child}.")


class Store(Protocol):
    """The state of the mock, with six collections in identifier order, their owner indexes and a seed.

    Records are plain dicts with exactly their collection's fields. What a method returns is never a
    reference into the state. A page is in ascending identifier order, with strings in code-point order.
    """

    def count(self, collection: str) -> int: ...

    def page(self, collection: str, offset: int, limit: int) -> list[Record]: ...

    def counted_page(self, collection: str, offset: int, limit: int) -> tuple[int, list[Record]]:
        """(count, page), read together, so a list's count always describes the page it came with."""
        ...

    def get(self, collection: str, key: Key) -> Record:
        """The record, or NotFound."""
        ...

    def owned(self, collection: str, field: str, owner: Key, offset: int, limit: int) -> tuple[int, list[Record]]:
        """(count, page) of the `collection` records whose `field` is `owner`. The owner must exist."""
        ...

    def create(self, collection: str, record: Record) -> Record:
        """Conflict on a duplicate identifier, InvalidReference where a parent is missing."""
        ...

    def update(self, collection: str, key: Key, changes: Record) -> Record:
        """Apply `changes`, all fields for PUT and some for PATCH. The identifier cannot change."""
        ...

    def delete(self, collection: str, key: Key) -> None:
        """NotFound, or Conflict while other records name this one."""
        ...

    def replace_all(self, dataset: Dataset) -> None:
        """Swap in a whole data set, all or nothing. It must be sound, with unique keys and references that resolve."""
        ...

    def reset(self) -> None:
        """Back to the data set the state was seeded with."""
        ...

    def export(self) -> dict[str, list[Record]]:
        """Every collection, every record, in page order."""
        ...

    def inconsistencies(self) -> Iterator[str]:
        """Every way the indexes disagree with the records. It is empty when the state is sound."""
        ...
