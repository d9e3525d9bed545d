"""What the run knows about the target's data before it starts testing, and what it made to know it.

- `references`: for each field naming another collection's item (a product's `productline`), an
  identifier in use. On an empty target the suite creates the item (a product line before its
  products) and removes it at the end of the run.
- `external`: for each field naming something outside this interface (`x-external-reference`, e.g. a
  customer's sales representative, an employee), the values the target already serves. The suite
  sends only those (or null when it knows none), since a backend may refuse a number it cannot know.
- `identities`: the run's one identifier allocator (see identities.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from contract_tests.identities import Identities
from contract_tests.judge.domain.http import Exchange, Session
from contract_tests.spec import Collection, Spec

SCAN_PAGE = 100  # one page of each list is enough to learn values in use


@dataclass
class Known:
    identities: Identities
    references: dict[str, Any] = field(default_factory=dict)
    external: dict[str, list[Any]] = field(default_factory=dict)
    made: list[tuple[Collection, Any]] = field(default_factory=list)
    """Items created so that references exist (collection, identifier), removed at the end of the run."""
    setup: list[Exchange] = field(default_factory=list)
    """The requests that created `made`: every reproduction on this target starts with them."""

    def external_value(self, name: str, prop: dict[str, Any]) -> Any:
        """A value of an external reference the target serves; else null when nullable; else the example."""
        values = self.external.get(name) or []
        if values:
            return values[0]
        return None if prop.get("nullable") else prop.get("example")


def first_page(session: Session, collection: Collection) -> list[Any]:
    if collection.list_op.id not in session.surface.operations:
        return []
    page = session.call(collection.list_op, query={"page_size": SCAN_PAGE}).json()
    results = page.get("results") if isinstance(page, dict) else None
    return [item for item in results or [] if isinstance(item, dict)]


def discover(spec: Spec, session: Session, identities: Identities) -> Known:
    """Learn (or make) what the run needs; `session` is on the backend."""
    known = Known(identities)
    pages = {collection.create.id: first_page(session, collection) for collection in spec.collections}
    for child in spec.collections:
        for name in spec.external_references(child.request_schema):
            seen = [item.get(name) for item in pages[child.create.id] if item.get(name) is not None]
            known.external[name] = list(dict.fromkeys(seen))
    for child in spec.collections:
        for name, parent in spec.references(child.create).items():
            if name in known.references:
                continue
            in_use = [item[name] for item in pages[child.create.id] if name in item]
            in_use += [item[parent.identifier] for item in pages[parent.create.id] if parent.identifier in item]
            if in_use:
                known.references[name] = in_use[0]
            elif parent.create.id in session.surface.operations:
                make(spec, session, known, parent)
    return known


def make(spec: Spec, session: Session, known: Known, collection: Collection, stem: Any = None) -> None:
    """Create one item of `collection` from the contract's example, so that others can name it; its
    identifier keeps as much of `stem` as fits (a consumer contract's replay: shaped like the recorded one)."""
    schema = collection.request_schema
    identifier = known.identities.fresh(schema["properties"][collection.identifier], stem)
    body = {**spec.example_body(schema), collection.identifier: identifier}
    for name, prop in schema["properties"].items():
        if name in spec.external_references(schema):
            body[name] = known.external_value(name, prop)
    created = session.call(collection.create, json=body)
    if created.status == 201:
        known.references[collection.identifier] = identifier
        known.made.append((collection, identifier))
        known.setup.append(created)


def remove_made(session: Session, known: Known) -> None:
    """Delete what `discover` made, last first (a backend refuses while others still name it: kept then)."""
    for collection, identifier in reversed(known.made):
        if collection.item_ops.get("delete") is not None:
            session.call(collection.item_ops["delete"], {collection.identifier: identifier})
