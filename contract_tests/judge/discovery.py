"""What the run learns of the target's data before testing (judge/known.py), and the items it makes to know it.

One page of each list shows the references and external values in use. On an empty target, the suite
creates an item of each collection others name, such as a product line before its products. It
removes the item at the end of the run.
"""

from __future__ import annotations

from typing import Any

from contract_tests.identities import Identities
from contract_tests.judge.domain.http import Session
from contract_tests.judge.known import Known
from contract_tests.spec import Collection, Spec

SCAN_PAGE = 100  # One page of each list is enough to learn the values in use.


def first_page(session: Session, collection: Collection) -> list[Any]:
    if not session.serves(collection.list_op):
        return []
    page = session.call(collection.list_op, query={"page_size": SCAN_PAGE}).json()
    results = page.get("results") if isinstance(page, dict) else None
    return [item for item in results or [] if isinstance(item, dict)]


def discover(spec: Spec, session: Session, identities: Identities) -> Known:
    """Learn, or make, what the run needs. `session` is on the backend."""
    known = Known(identities)
    pages = {collection.create.id: first_page(session, collection) for collection in spec.collections}
    for collection in spec.collections:
        served = [item[collection.identifier] for item in pages[collection.create.id] if collection.identifier in item]
        known.items[collection.identifier] = served
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
            elif session.serves(parent.create):
                make(spec, session, known, parent)
    return known


def make(spec: Spec, session: Session, known: Known, collection: Collection, stem: Any = None) -> None:
    """Create one item of `collection` from the contract's example, so that others can name it. Its
    identifier keeps as much of `stem` as fits. A consumer contract's replay uses that to shape it like the
    recorded one."""
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
        known.setup.append(created.curl())


def remove_made(session: Session, known: Known) -> None:
    """Delete what `discover` made, last first. A backend refuses while others still name an item, which is
    then kept."""
    for collection, identifier in reversed(known.made):
        if collection.item_ops.get("delete") is not None:
            session.call(collection.item_ops["delete"], {collection.identifier: identifier})
