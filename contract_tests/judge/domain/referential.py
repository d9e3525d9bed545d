"""`referential_rules`: references between collections hold.

- An item naming a missing item of another collection (a product's `productline`) is refused with
  400 and not created.
- A DELETE of an item with dependants answers 409 and deletes nothing. So the item and its sub-lists
  (the create operation's links to lists) read back as before. Any other status, a 5xx included, is
  this check's violation, naming the dependants.
- Where the dependants are a collection the client creates, such as a product line's products, the
  test makes both items and removes them afterwards.
- Where they are read-only, such as a product's order details or a customer's orders and payments, it
  uses an owner the target already has with at least one. With none, the case is reported as not
  exercised.
"""

from __future__ import annotations

from typing import Any

from contract_tests.judge.domain.data import Context
from contract_tests.judge.domain.http import Exchange, Session
from contract_tests.judge.domain.owners import dependant_collection
from contract_tests.spec import Collection, Operation

CHECK = "referential_rules"
OWNER_CANDIDATES = 50


def run(ctx: Context, session: Session) -> None:
    for child in ctx.spec.collections:
        for name, parent in ctx.spec.references(child.create).items():
            ops = (child.create, child.item_ops["get"], child.item_ops["delete"])
            if session.serves(*ops) and ctx.selected(child.create) and ctx.collection_is_mine(child):
                missing_parent(ctx, session, child, parent, name)
    for owner in ctx.spec.collections:
        delete = owner.item_ops["delete"]
        needed = (owner.create, delete, owner.item_ops["get"], owner.list_op)
        if not session.serves(*needed) or not ctx.selected(delete) or not ctx.collection_is_mine(owner):
            continue
        for sub_list in owner.sub_lists:
            if not session.serves(sub_list):
                continue
            dependant = dependant_collection(ctx, owner, sub_list)
            if dependant is not None and session.serves(dependant.create):
                made_dependant(ctx, session, owner, dependant, sub_list)
            else:
                served_dependant(session, owner, sub_list)


def missing_parent(ctx: Context, session: Session, child: Collection, parent: Collection, name: str) -> None:
    identifier = ctx.fresh_identifier(child)
    body = {**ctx.valid_body(child, identifier), name: ctx.missing_identifier(parent)}
    created = session.call(child.create, json=body)
    broken = None if created.status == 400 else f"a {name} that does not exist answered {created.status}, not 400"
    session.judge(CHECK, child.create, created, broken)
    read = session.call(child.item_ops["get"], {child.identifier: identifier})
    refused = None if read.status == 404 else "the refused item was created"
    session.judge(CHECK, child.item_ops["get"], read, refused, [created])  # A created item stays, named.


def listed(session: Session, sub_list: Operation, params: dict[str, Any]) -> int | None:
    page = session.call(sub_list, params, query={"page_size": 1}).json()
    return page.get("count") if isinstance(page, dict) and isinstance(page.get("count"), int) else None


def delete_refused(
    session: Session, owner: Collection, sub_list: Operation, value: Any, dependants: str, setup: list[Exchange]
) -> bool:
    """DELETE the owner of `dependants`. It answers 409, and the owner and its sub-list read back as before."""
    params = {owner.identifier: value}
    before = listed(session, sub_list, params)
    deleted = session.call(owner.item_ops["delete"], params)
    still = session.call(owner.item_ops["get"], params)
    after = listed(session, sub_list, params)
    what = f"DELETE of {owner.identifier}={value!r}, which has dependants ({dependants}), answered {deleted.status}"
    broken = None
    if still.status != 200:
        broken = f"{what} and deleted it (a read answers {still.status})"
    elif after != before:
        broken = f"{what} and changed its dependants ({sub_list.id} count {before} → {after})"
    elif deleted.status != 409:
        broken = f"{what}, not 409"
    return session.judge(CHECK, owner.item_ops["delete"], deleted, broken, setup)


def made_dependant(ctx: Context, session: Session, owner: Collection, child: Collection, sub_list: Operation) -> None:
    owner_id, child_id = ctx.fresh_identifier(owner), ctx.fresh_identifier(child)
    made_owner = session.call(owner.create, json=ctx.valid_body(owner, owner_id))
    name = child.identifier
    made_child = session.call(child.create, json={**ctx.valid_body(child, child_id), owner.identifier: owner_id})
    if made_owner.status != 201 or made_child.status != 201:
        reason = f"the items to delete could not be created (HTTP {made_owner.status}, {made_child.status})"
        session.ledger.skipped(session.surface.name, owner.item_ops["delete"].id, CHECK, reason)
    elif delete_refused(session, owner, sub_list, owner_id, f"{name}={child_id!r}", [made_owner, made_child]):
        child_read = session.call(child.item_ops["get"], {name: child_id})
        moved = (child_read.json() or {}).get(owner.identifier) if isinstance(child_read.json(), dict) else None
        broken = None if moved == owner_id else f"the refused DELETE changed the dependant {name}={child_id!r}"
        if not session.judge(CHECK, child.item_ops["get"], child_read, broken, [made_owner, made_child]):
            return  # Both stay, named in the violation.
    else:
        return  # Both stay, named in the violation.
    session.call(child.item_ops["delete"], {name: child_id})
    session.call(owner.item_ops["delete"], {owner.identifier: owner_id})


def served_dependant(session: Session, owner: Collection, sub_list: Operation) -> None:
    """An owner the target already has, with items in the read-only `sub_list`."""
    page = session.call(owner.list_op, query={"page_size": OWNER_CANDIDATES}).json()
    results = page.get("results") if isinstance(page, dict) else None
    for item in results or []:
        value = item.get(owner.identifier) if isinstance(item, dict) else None
        count = listed(session, sub_list, {owner.identifier: value}) if value is not None else None
        if count:
            delete_refused(session, owner, sub_list, value, f"{count} in {sub_list.id}", [])
            return
    reason = (
        f"no {owner.identifier} among the first {OWNER_CANDIDATES} has items in {sub_list.id}, "
        "and the suite cannot create those (read-only)"
    )
    session.ledger.skipped(session.surface.name, owner.item_ops["delete"].id, CHECK, reason)
