"""The life of one item of each collection, through the create operation's links.

create -> read -> duplicate create -> replace -> read -> change one field -> read -> replace with the
required fields alone -> read -> delete -> read. It runs three checks.
- `round_trip` checks that what was written is what is read back, decimals by value. An optional field
  a PUT leaves out holds null or its value before (decision `put-replaces`). A PATCH changes only the
  fields it sends. A read after a write never shows the old state.
- `duplicate_rejected` checks that a duplicate create answers 400 or 409. The strict
  `duplicate_is_conflict` wants 409.
- `deleted_stays_deleted` checks that a read after DELETE is 404.

An item named in a violation is kept, for its reproduction, and the delete is listed as not exercised.
"""

from __future__ import annotations

from typing import Any

from contract_tests.judge.domain.data import Context, changed_body, changed_value, differences
from contract_tests.judge.domain.http import Exchange, Session
from contract_tests.spec import JSON, Collection


def status_is(exchange: Exchange, *expected: int) -> str | None:
    if exchange.status in expected:
        return None
    wanted = " or ".join(str(code) for code in expected)
    return f"expected HTTP {wanted}, got {exchange.status}"


def holds(exchange: Exchange, status: int, expected: JSON, what: str) -> str | None:
    """None when `exchange` answered `status` with a body holding `expected`. Otherwise what went wrong."""
    wrong = status_is(exchange, status)
    if wrong is not None:
        return f"{what}: {wrong}"
    diffs = differences(expected, exchange.json())
    return f"{what}: " + "; ".join(diffs) if diffs else None


def run(ctx: Context, session: Session) -> None:
    for collection in ctx.spec.collections:
        ops = [collection.create, *collection.item_ops.values()]
        if session.serves(*ops) and ctx.selected(*ops) and ctx.collection_is_mine(collection):
            walk(ctx, session, collection)


def walk(ctx: Context, session: Session, collection: Collection) -> None:
    identifier = ctx.fresh_identifier(collection)
    params = {collection.identifier: identifier}
    body = ctx.valid_body(collection, identifier)
    get, delete = collection.item_ops["get"], collection.item_ops["delete"]
    created = session.call(collection.create, json=body)
    found = len(session.ledger.violations)
    if not session.judge("round_trip", collection.create, created, holds(created, 201, body, "the created item")):
        return  # Anything created stays, for the violation that names it.
    setup = [created]  # Each violation below carries the writes before it, so its reproduction is whole.
    read = session.call(get, params)
    session.judge("round_trip", get, read, holds(read, 200, body, "a read after create"), setup)
    duplicate(ctx, session, collection, body, setup)
    state = rewrite(ctx, session, collection, params, body, setup)
    state = change_one(ctx, session, collection, params, state, setup)
    replace_leaving_out(session, collection, params, state, setup)
    if len(session.ledger.violations) > found:
        reason = f"{collection.identifier}={identifier!r} is kept for the violation that names it, not deleted"
        session.ledger.skipped(session.surface.name, delete.id, "deleted_stays_deleted", reason)
        return
    deleted = session.call(delete, params)
    session.judge("deleted_stays_deleted", delete, deleted, status_is(deleted, 200, 202, 204), setup)
    gone = session.call(get, params)
    broken = None if gone.status == 404 else f"a read after DELETE answered {gone.status}, not 404"
    session.judge("deleted_stays_deleted", get, gone, broken, [*setup, deleted])


def duplicate(ctx: Context, session: Session, collection: Collection, body: JSON, setup: list[Exchange]) -> None:
    again = session.call(collection.create, json=body)
    session.judge("duplicate_rejected", collection.create, again, status_is(again, 400, 409), setup)
    if "duplicate_is_conflict" in ctx.strict:
        session.judge("duplicate_is_conflict", collection.create, again, status_is(again, 409), setup)


def rewrite(
    ctx: Context, session: Session, collection: Collection, params: dict[str, Any], body: JSON, setup: list[Exchange]
) -> JSON:
    """PUT every field changed. The answer and the next read hold the new state. The PUT joins `setup`."""
    put, get = collection.item_ops["put"], collection.item_ops["get"]
    replaced = changed_body(ctx, collection, body)
    written = session.call(put, params, json=replaced)
    session.judge("round_trip", put, written, holds(written, 200, replaced, "the replaced item"), setup)
    setup.append(written)
    read = session.call(get, params)
    session.judge("round_trip", get, read, holds(read, 200, replaced, "a read after PUT shows the old state"), setup)
    return replaced


def replace_leaving_out(
    session: Session, collection: Collection, params: dict[str, Any], state: JSON, setup: list[Exchange]
) -> None:
    """PUT the required fields alone. Each optional field left out then holds null, or its value before.
    The decision `put-replaces` admits either, not a third value such as a default. The answer and the
    next read hold what was sent and agree. The PUT joins `setup`."""
    put, get = collection.item_ops["put"], collection.item_ops["get"]
    required = set((put.request_schema or {}).get("required", []))
    left_out = [name for name in state if name not in required]
    if not left_out:
        return
    sent = {name: value for name, value in state.items() if name in required}
    what = f"a PUT leaving out {', '.join(f'`{name}`' for name in left_out)}"
    written = session.call(put, params, json=sent)
    broken = holds(written, 200, sent, what) or left_out_problem(written, state, left_out, what)
    if not session.judge("round_trip", put, written, broken, setup):
        return
    setup.append(written)
    answer = written.json() or {}
    after = {**state, **{name: answer.get(name) for name in left_out}}
    read = session.call(get, params)
    session.judge("round_trip", get, read, holds(read, 200, after, f"a read after {what}"), setup)


def left_out_problem(exchange: Exchange, state: JSON, left_out: list[str], what: str) -> str | None:
    """The first field of `left_out` the answer holds as neither null nor its value in `state`."""
    answer = exchange.json() or {}
    for name in left_out:
        value = answer.get(name)
        if value is not None and differences({name: state[name]}, answer):
            return f"{what}: `{name}` holds {value!r}, neither null nor its value before, {state[name]!r}"
    return None


def change_one(
    ctx: Context, session: Session, collection: Collection, params: dict[str, Any], state: JSON, setup: list[Exchange]
) -> JSON:
    """PATCH one field. Every other field keeps its value, in the answer and in the next read. The PATCH
    joins `setup`. Returns the item's state after it."""
    patch, get = collection.item_ops["patch"], collection.item_ops["get"]
    props = collection.request_schema["properties"]
    fixed = {collection.identifier, *ctx.spec.references(collection.create)}
    name = next(n for n in state if n not in fixed and props[n].get("type") == "string")
    expected = {**state, name: changed_value(props[name], state[name])}
    patched = session.call(patch, params, json={name: expected[name]})
    session.judge("round_trip", patch, patched, holds(patched, 200, expected, f"a PATCH of `{name}` alone"), setup)
    setup.append(patched)
    read = session.call(get, params)
    session.judge("round_trip", get, read, holds(read, 200, expected, "a read after PATCH"), setup)
    return expected
