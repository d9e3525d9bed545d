"""The checks of concurrent writes: the contract holds when clients write at the same instant.

Each runs on every collection whose operations the surface serves, in tries (judge/domain/racing.py:
only a try whose requests all were on the wire before the first answer is judged; none such, and the
check is not exercised):

- `concurrent_lost_update`: two PATCHes of different fields of one item; afterwards both changes are
  there (a service writing back the whole row it read loses one);
- `concurrent_same_field`: two PATCHes of one field; the value read back is one of the two, whole, and
  the item's other fields are as they were;
- `concurrent_duplicate_create`: creates of one new identifier at once; exactly one succeeds, every
  other answer is the refusal of a duplicate `duplicate_rejected` admits (409, or 400: the spec's
  decision `duplicate-identifier`), never a 5xx; the item reads back, and is listed once (read in one
  try of LISTED_EVERY: a list page is the costliest read);
- `concurrent_write_delete`: a PATCH and a DELETE of one item at once; each answers a status its
  operation documents, never a 5xx; a DELETE that succeeded leaves no item behind: a read answers
  404, and so does a later PATCH (it must not bring the item back).

Every item a try makes is deleted by it.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from contract_tests.client.burst import Burst
from contract_tests.client.together import Together
from contract_tests.judge.domain.data import Context, changed_body, differences
from contract_tests.judge.domain.http import Session
from contract_tests.judge.domain.placement import locate, results
from contract_tests.judge.domain.racing import Try, counted, race, request, server_errors
from contract_tests.outcome.standalone import DUPLICATE_REFUSED, same_value
from contract_tests.spec import JSON, Collection

LOST_UPDATE = "concurrent_lost_update"
SAME_FIELD = "concurrent_same_field"
DUPLICATE_CREATE = "concurrent_duplicate_create"
WRITE_DELETE = "concurrent_write_delete"
CREATES = 3
"""Creates of one identifier sent at once."""
LISTED_EVERY = 4
"""A duplicate create's try reads the list (a page or more of the largest size) once in this many tries."""
REFUSED = DUPLICATE_REFUSED
"""A duplicate's refusal, as `duplicate_rejected` admits it (the spec's decision `duplicate-identifier`)."""

Check = Callable[[Context, Session, Collection], None]


def run(check: str, ctx: Context, session: Session) -> None:
    """`check` on each collection with the operations it needs on this surface."""
    for collection in ctx.spec.collections:
        ops = [collection.create, *collection.item_ops.values()]
        judged = collection.create if check == DUPLICATE_CREATE else collection.item_ops["patch"]
        if (
            all(op.id in session.surface.operations for op in ops)
            and ctx.selected(judged)
            and ctx.collection_is_mine(collection)
        ):
            CHECKS[check](ctx, session, collection)


def changing(ctx: Context, collection: Collection, body: JSON) -> tuple[JSON, list[str]]:
    """Another valid state of the item, and the fields (not fixed ones) whose value it changes."""
    changed = changed_body(ctx, collection, body)
    fixed = ctx.fixed_fields(collection)
    names = [name for name in body if name not in fixed and not same_value(body[name], changed[name])]
    return changed, names


def lost_update(ctx: Context, session: Session, collection: Collection) -> None:
    patch, get, delete = (collection.item_ops[m] for m in ("patch", "get", "delete"))
    identifier = ctx.fresh_identifier(collection)
    params = {collection.identifier: identifier}
    body = ctx.valid_body(collection, identifier)
    changed, names = changing(ctx, collection, body)
    if len(names) < 2:
        session.ledger.skipped(session.surface.name, patch.id, LOST_UPDATE, "fewer than two fields can change")
        return
    created = session.create_for(LOST_UPDATE, patch, collection, body, "the item to patch at once")
    if created is None:
        return
    first, second = names[:2]

    def attempt(number: int) -> Try:
        wanted = changed if number % 2 == 0 else body  # each try changes both fields from their last value
        sent = [request(session, patch, params, json={name: wanted[name]}) for name in (first, second)]
        burst = together.send(sent)
        counted(session, (patch, patch), burst)
        read = session.call(get, params)
        broken = server_errors(burst) or not_written(burst, patch.method)
        lost = differences({first: wanted[first], second: wanted[second]}, read.json())
        if broken is None and lost:
            broken = f"a change was lost: PATCHes of `{first}` and `{second}` read back {'; '.join(lost)}"
        return Try(burst, read, broken, [created])

    with Together(session.limits, 2) as together:
        race(session, LOST_UPDATE, patch, ctx.race_tries, attempt)
    session.call(delete, params)


def not_written(burst: Burst, method: str) -> str | None:
    """A write of an existing item that did not succeed, in words (None: each answered 2xx)."""
    failed = [each.response.status_code for each in burst.timed if not 200 <= each.response.status_code < 300]
    return f"a {method.upper()} of an existing item answered {failed[0]}, not success" if failed else None


def same_field(ctx: Context, session: Session, collection: Collection) -> None:
    patch, get, delete = (collection.item_ops[m] for m in ("patch", "get", "delete"))
    identifier = ctx.fresh_identifier(collection)
    params = {collection.identifier: identifier}
    body = ctx.valid_body(collection, identifier)
    values = four_values(ctx, collection, body)
    if values is None:
        reason = "no field takes four different values"
        session.ledger.skipped(session.surface.name, patch.id, SAME_FIELD, reason)
        return
    name, chain = values
    created = session.create_for(SAME_FIELD, patch, collection, body, "the item to patch at once")
    if created is None:
        return
    others = {key: value for key, value in body.items() if key != name}

    def attempt(number: int) -> Try:
        pair = (chain[1], chain[2]) if number % 2 == 0 else (chain[0], chain[3])  # neither is the value before
        burst = together.send([request(session, patch, params, json={name: value}) for value in pair])
        counted(session, (patch, patch), burst)
        read = session.call(get, params)
        broken = server_errors(burst) or not_written(burst, patch.method)
        stored = read.json().get(name, "<missing>") if isinstance(read.json(), dict) else read.json()
        if broken is None and not any(same_value(value, stored) for value in pair):
            broken = f"PATCHes of `{name}` to {pair[0]!r} and {pair[1]!r} read back {stored!r}, neither of the two"
        if broken is None and differences(others, read.json()):
            broken = f"PATCHes of `{name}` alone changed other fields: {'; '.join(differences(others, read.json()))}"
        return Try(burst, read, broken, [created])

    with Together(session.limits, 2) as together:
        race(session, SAME_FIELD, patch, ctx.race_tries, attempt)
    session.call(delete, params)


def four_values(ctx: Context, collection: Collection, body: JSON) -> tuple[str, list[Any]] | None:
    """A field that can change, and four different valid values of it, its value in `body` first."""
    for name in changing(ctx, collection, body)[1]:
        chain = [body[name]]
        for _ in range(3):
            chain.append(ctx.changed_value(collection, name, chain[-1]))
        if all(not same_value(a, b) for i, a in enumerate(chain) for b in chain[i + 1 :]):
            return name, chain
    return None


def duplicate_create(ctx: Context, session: Session, collection: Collection) -> None:
    create, get, delete, listing = (
        collection.create,
        collection.item_ops["get"],
        collection.item_ops["delete"],
        collection.list_op,
    )
    name = collection.identifier
    ordered = ctx.spec.order_by(listing) == name
    maximum = ctx.spec.page_size_maximum(listing)

    def attempt(number: int) -> Try:
        identifier = ctx.fresh_identifier(collection)
        params = {name: identifier}
        body = ctx.valid_body(collection, identifier)
        burst = together.send([request(session, create, {}, json=body) for _ in range(CREATES)])
        counted(session, [create] * CREATES, burst)
        statuses = [each.response.status_code for each in burst.timed]
        read = session.call(get, params)
        broken = server_errors(burst)
        if broken is None and (statuses.count(201) != 1 or any(s not in (201, *REFUSED) for s in statuses)):
            refusals = " or ".join(map(str, REFUSED))
            broken = f"{CREATES} creates of {name}={identifier!r} answered {statuses}: not one 201 and {refusals}"
        if broken is None and read.status != 200:
            broken = f"the item created answered {read.status} to a read"
        if broken is None and number % LISTED_EVERY == 0:
            page = locate(session, listing, {}, name, identifier, maximum, ordered)
            listed = [item for item in results(page.exchange) or [] if isinstance(item, dict)]
            times = sum(1 for item in listed if same_value(identifier, item.get(name)))
            broken = None if times == 1 else f"{name}={identifier!r} is listed {times} times in {listing.id}"
        for _ in range(max(1, statuses.count(201))):
            session.call(delete, params)
        return Try(burst, read, broken)

    with Together(session.limits, CREATES) as together:
        race(session, DUPLICATE_CREATE, create, ctx.race_tries, attempt)


def write_delete(ctx: Context, session: Session, collection: Collection) -> None:
    patch, get, delete = (collection.item_ops[m] for m in ("patch", "get", "delete"))
    documented = {op.id: {int(s) for s in op.definition.get("responses", {}) if s.isdigit()} for op in (patch, delete)}

    def attempt(number: int) -> Try | None:
        identifier = ctx.fresh_identifier(collection)
        params = {collection.identifier: identifier}
        body = ctx.valid_body(collection, identifier)
        created = session.create_for(WRITE_DELETE, patch, collection, body, "the item to patch and delete at once")
        if created is None:
            return None
        changed, names = changing(ctx, collection, body)
        change = {name: changed[name] for name in names[:1]}
        sent = [request(session, patch, params, json=change), request(session, delete, params)]
        burst = together.send(sent)
        counted(session, (patch, delete), burst)
        read = session.call(get, params)
        broken = server_errors(burst)
        for op, each in zip((patch, delete), burst.timed, strict=True):
            if broken is None and each.response.status_code not in documented[op.id]:
                broken = f"{op.method.upper()} answered {each.response.status_code}, a status it does not document"
        deleted = 200 <= burst.timed[1].response.status_code < 300
        gone = deleted and read.status == 404
        if broken is None and deleted and not gone:
            broken = f"the DELETE answered {burst.timed[1].response.status_code}, yet a read answers {read.status}"
        if broken is None and gone:
            again = session.call(patch, params, json=change)  # a later write must not bring it back
            if again.status != 404:
                broken, read, gone = f"the DELETE succeeded, yet a later PATCH answered {again.status}", again, False
        if not gone:
            session.call(delete, params)
        return Try(burst, read, broken, [created])

    with Together(session.limits, 2) as together:
        race(session, WRITE_DELETE, patch, ctx.race_tries, attempt)


CHECKS: dict[str, Check] = {
    LOST_UPDATE: lost_update,
    SAME_FIELD: same_field,
    DUPLICATE_CREATE: duplicate_create,
    WRITE_DELETE: write_delete,
}
TESTS = {name: partial(run, name) for name in CHECKS}
"""The domain tests' table entries (run/runner.py): one per check, so that `--checks` runs only those chosen."""
