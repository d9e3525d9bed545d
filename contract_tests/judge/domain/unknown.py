"""`unknown_not_found`: every URL naming something that does not exist is 404, before and after a delete.

For each collection, the check takes an identifier never created. A read, a PUT with a valid body, a
PATCH, a DELETE and each sub-list it would own (`unknown-resource`) all answer 404 at it. The PUT
answers 404 because PUT never creates (`put-never-creates`).

Then an item is created and each sub-list it owns, still empty, answers page 1 as a 200 page with no
results (decision `page-past-the-end`): an owner that exists is not one that does not. The item is
then deleted, and the same requests at its identifier answer 404 again. A service that caches the
item, or lists a sub-list without looking its owner up, answers otherwise.
A PUT that creates the missing item is undone by the DELETE that ends each series.
"""

from __future__ import annotations

from typing import Any

from contract_tests.judge.domain.data import Context
from contract_tests.judge.domain.http import Exchange, Session
from contract_tests.spec import Collection

CHECK = "unknown_not_found"


def run(ctx: Context, session: Session) -> None:
    for collection in ctx.spec.collections:
        ops = [collection.create, *collection.item_ops.values()]
        if (
            session.serves(*ops)
            and ctx.selected(*collection.item_ops.values(), *collection.sub_lists)
            and ctx.collection_is_mine(collection)
        ):
            missing = ctx.missing_identifier(collection)
            all_not_found(ctx, session, collection, missing, "never created", [])
            deleted = ctx.fresh_identifier(collection)
            created = session.call(collection.create, json=ctx.valid_body(collection, deleted))
            if created.status != 201:
                reason = f"the item to delete could not be created (HTTP {created.status})"
                session.ledger.skipped(session.surface.name, collection.item_ops["delete"].id, CHECK, reason)
                continue
            empty_sub_lists(ctx, session, collection, deleted, [created])
            gone = session.call(collection.item_ops["delete"], {collection.identifier: deleted})
            if gone.status in (200, 202, 204):
                all_not_found(ctx, session, collection, deleted, "deleted", [created, gone])


def empty_sub_lists(
    ctx: Context, session: Session, collection: Collection, identifier: Any, setup: list[Exchange]
) -> None:
    """Page 1 of each sub-list of the item just made, so empty. It is a 200 page with a count of 0, no
    results and no links (decision `page-past-the-end`), not the 404 of an owner that does not exist."""
    name = collection.identifier
    empty: dict[str, Any] = {"count": 0, "next": None, "previous": None, "results": []}
    for sub_list in collection.sub_lists:
        if not session.serves(sub_list) or not ctx.selected(sub_list):
            continue
        page = session.call(sub_list, {name: identifier})
        body = page.json()
        what = f"page 1 of {sub_list.id} of the new {name}={identifier!r}, still empty,"
        broken = None
        if page.status != 200:
            broken = f"{what} answered {page.status}, not 200"
        elif not isinstance(body, dict) or {key: body.get(key) for key in empty} != empty:
            broken = f"{what} is not an empty page (a count of 0, no results, no links)"
        session.judge(CHECK, sub_list, page, broken, setup)


def all_not_found(
    ctx: Context, session: Session, collection: Collection, identifier: Any, what: str, setup: list[Exchange]
) -> None:
    """Every operation at `identifier` answers 404. One that answers otherwise is a violation."""
    name = collection.identifier
    params = {name: identifier}
    body = ctx.valid_body(collection, identifier)
    patched = {field: value for field, value in body.items() if field not in ctx.fixed_fields(collection)}
    ops = collection.item_ops
    requests: list[tuple[Any, dict[str, Any]]] = [
        (ops["get"], {}),
        (ops["put"], {"json": body}),
        (ops["patch"], {"json": dict(list(patched.items())[:1])}),
        *((sub_list, {}) for sub_list in collection.sub_lists if session.serves(sub_list)),
        (ops["delete"], {}),
    ]
    for op, content in requests:
        if not session.serves(op) or not ctx.selected(op):
            continue
        exchange = session.call(op, params, **content)
        broken = None
        if exchange.status != 404:
            broken = f"{op.id} of the {what} {name}={identifier!r} answered {exchange.status}, not 404"
        session.judge(CHECK, op, exchange, broken, setup)
