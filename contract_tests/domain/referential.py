"""`referential_rules`: references between collections hold.

For each body field naming another collection's item (a product's `productline`):
- an item naming a missing one is refused with 400 and not created;
- deleting the named item while it is still named leaves both in place (the contract answers 409).
Everything is done on items the test creates, and removed afterwards.
"""

from __future__ import annotations

from contract_tests.domain.data import Context
from contract_tests.domain.http import Session
from contract_tests.spec import Collection

CHECK = "referential_rules"


def run(ctx: Context, session: Session) -> None:
    for child in ctx.spec.collections:
        for name, parent in ctx.spec.references(child.create).items():
            ops = (child.create, parent.create, child.item_ops["get"], parent.item_ops["delete"])
            if all(op.id in session.surface.operations for op in ops) and ctx.selected(*ops):
                missing_parent(ctx, session, child, parent, name)
                parent_in_use(ctx, session, child, parent, name)


def missing_parent(ctx: Context, session: Session, child: Collection, parent: Collection, name: str) -> None:
    identifier = ctx.fresh_identifier(child)
    body = {**ctx.valid_body(child, identifier), name: ctx.missing_identifier(parent)}
    created = session.call(child.create, json=body)
    broken = None if created.status == 400 else f"a {name} that does not exist answered {created.status}, not 400"
    session.judge(CHECK, child.create, created, broken)
    read = session.call(child.item_ops["get"], {child.identifier: identifier})
    session.judge(CHECK, child.item_ops["get"], read, None if read.status == 404 else "the refused item was created")
    if read.status != 404:
        session.call(child.item_ops["delete"], {child.identifier: identifier})


def parent_in_use(ctx: Context, session: Session, child: Collection, parent: Collection, name: str) -> None:
    parent_id, child_id = ctx.fresh_identifier(parent), ctx.fresh_identifier(child)
    session.call(parent.create, json=ctx.valid_body(parent, parent_id))
    session.call(child.create, json={**ctx.valid_body(child, child_id), name: parent_id})
    deleted = session.call(parent.item_ops["delete"], {parent.identifier: parent_id})
    child_read = session.call(child.item_ops["get"], {child.identifier: child_id})
    parent_read = session.call(parent.item_ops["get"], {parent.identifier: parent_id})
    broken = None
    if child_read.status != 200 or (child_read.json() or {}).get(name) != parent_id:
        broken = f"deleting the {name} an item names removed or changed that item ({child_read.status})"
    elif parent_read.status != 200:
        broken = f"a {name} still named by an item was deleted (DELETE answered {deleted.status})"
    session.judge(CHECK, parent.item_ops["delete"], deleted, broken)
    session.call(child.item_ops["delete"], {child.identifier: child_id})
    session.call(parent.item_ops["delete"], {parent.identifier: parent_id})
