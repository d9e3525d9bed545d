"""The checks of concurrent writes: the contract holds when clients write at the same instant.

Each runs on every collection whose operations the surface serves, in tries (judge/domain/racing.py).
Only a try whose requests were all on the wire before the first answer is judged. With no such try,
the check is not exercised.

- `concurrent_lost_update` sends two PATCHes of different fields of one item. Afterwards both changes
  must be there, because a service writing back the whole row it read loses one.
- `concurrent_same_field` sends two PATCHes of one field. The value read back must be one of the two,
  whole, and the item's other fields must be as they were.
- `concurrent_duplicate_create` sends creates of one new identifier at once. Exactly one succeeds.
  Every other answer is the refusal of a duplicate that `duplicate_rejected` admits, never a 5xx.
  That refusal is 409, or 400 by the spec's decision `duplicate-identifier`. The item reads back.
  The collection's list is not read, because other parts' writes move an item between pages while a
  list is searched. So what a search finds differs from one run of a seed to the next.
- `concurrent_write_delete` sends a PATCH and a DELETE of one item at once. Each answers a status its
  operation documents, never a 5xx. A DELETE that succeeded leaves no item behind, so a read answers
  404. A later PATCH answers 404 too, since it must not bring the item back.

Every item a wave of tries makes (racing.py) is deleted at its end, all at once.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from typing import Any

from contract_tests.client import arrival
from contract_tests.client.burst import Burst
from contract_tests.client.together import Together
from contract_tests.judge.domain.data import Context, changed_body, differences
from contract_tests.judge.domain.http import Exchange, Session
from contract_tests.judge.domain.racing import (
    Call,
    Try,
    at_once,
    counted,
    documented,
    made,
    one_at_a_time,
    planned,
    race,
    request,
    server_errors,
    staggered,
    wave_size,
)
from contract_tests.outcome.standalone import DUPLICATE_REFUSED, same_value
from contract_tests.spec import JSON, Collection, Operation

LOST_UPDATE = "concurrent_lost_update"
SAME_FIELD = "concurrent_same_field"
DUPLICATE_CREATE = "concurrent_duplicate_create"
WRITE_DELETE = "concurrent_write_delete"
CREATES = 3
"""Creates of one identifier sent at once."""
REFUSED = DUPLICATE_REFUSED
"""A duplicate's refusal, as `duplicate_rejected` admits it (the spec's decision `duplicate-identifier`)."""

Check = Callable[[Context, Session, Collection], None]


def run(check: str, ctx: Context, session: Session) -> None:
    """`check` on each collection with the operations it needs on this surface."""
    for collection in ctx.spec.collections:
        ops = [collection.create, *collection.item_ops.values()]
        judged = collection.create if check == DUPLICATE_CREATE else collection.item_ops["patch"]
        if not (session.serves(*ops) and ctx.selected(judged) and ctx.collection_is_mine(collection)):
            continue
        if not one_at_a_time(session, check, judged, collection, arrival.probed):
            CHECKS[check](ctx, session, collection)


def changing(ctx: Context, collection: Collection, body: JSON) -> tuple[JSON, list[str]]:
    """Another valid state of the item, and the fields (not fixed ones) whose value it changes."""
    changed = changed_body(ctx, collection, body)
    fixed = ctx.fixed_fields(collection)
    names = [name for name in body if name not in fixed and not same_value(body[name], changed[name])]
    return changed, names


def lost_update(ctx: Context, session: Session, collection: Collection) -> None:
    patch, get = (collection.item_ops[m] for m in ("patch", "get"))
    size = wave_size(ctx.race_tries)
    items = planned(ctx, collection, size)
    changes = [changing(ctx, collection, body) for _, body in items]
    if any(len(names) < 2 for _, names in changes):
        session.ledger.skipped(session.surface.name, patch.id, LOST_UPDATE, "fewer than two fields can change")
        return

    def wave(numbers: range) -> list[Try]:
        tried = list(zip(numbers, items, changes, created or (), strict=False))
        # Each try changes both fields from their last value, so the item's wave alternates the two states.
        wanted = [changed if (number // size) % 2 == 0 else body for number, (_, body), (changed, _), _ in tried]
        fields = [names[:2] for _, names in changes]
        bursts = together.send_each(
            [[request(session, patch, params, json={name: want[name]}) for name in two]
             for (_, (params, _), _, _), want, two in zip(tried, wanted, fields, strict=False)]
        )  # fmt: skip
        reads = at_once(session, together, [Call(get, params) for _, (params, _), _, _ in tried])
        done = []
        for (_, _, _, setup), want, (first, second), burst, read in zip(
            tried, wanted, fields, bursts, reads, strict=False
        ):
            counted(session, (patch, patch), burst)
            broken = server_errors(burst) or not_written(burst, patch.method)
            lost = differences({first: want[first], second: want[second]}, read.json())
            if broken is None and lost:
                broken = f"a change was lost: PATCHes of `{first}` and `{second}` read back {'; '.join(lost)}"
            done.append(Try(burst, read, broken, [setup]))
        return done

    with made_items(session, LOST_UPDATE, patch, collection, items) as (together, created):
        if created is not None:
            race(session, LOST_UPDATE, patch, ctx.race_tries, wave)


@contextlib.contextmanager
def made_items(
    session: Session, check: str, op: Operation, collection: Collection, items: list[tuple[dict[str, Any], JSON]]
) -> Iterator[tuple[Together, list[Exchange] | None]]:
    """A `Together` with two places per item (a try races two requests), and `items` created at once: their
    answers, or None when the target refused one (`check` is then listed as not exercised at `op`). The items
    are deleted when the block ends."""
    with Together(session.limits, 2 * len(items), staggered(session)) as together:
        yield together, made(session, together, check, op, collection, [body for _, body in items])
        at_once(session, together, [Call(collection.item_ops["delete"], params) for params, _ in items])


def not_written(burst: Burst, method: str) -> str | None:
    """A write of an existing item that did not succeed, in words. None when each answered 2xx."""
    failed = [each.response.status_code for each in burst.timed if not 200 <= each.response.status_code < 300]
    return f"a {method.upper()} of an existing item answered {failed[0]}, not success" if failed else None


def same_field(ctx: Context, session: Session, collection: Collection) -> None:
    patch, get = (collection.item_ops[m] for m in ("patch", "get"))
    size = wave_size(ctx.race_tries)
    items = planned(ctx, collection, size)
    values = [four_values(ctx, collection, body) for _, body in items]
    if any(value is None for value in values):
        reason = "no field takes four different values"
        session.ledger.skipped(session.surface.name, patch.id, SAME_FIELD, reason)
        return
    chains = [value for value in values if value is not None]

    def wave(numbers: range) -> list[Try]:
        tried = list(zip(numbers, items, chains, created or (), strict=False))
        # The item's wave alternates the two pairs, so neither value of a pair is the one before it.
        pairs = [
            (chain[1], chain[2]) if (number // size) % 2 == 0 else (chain[0], chain[3])
            for number, _, (_, chain), _ in tried
        ]
        bursts = together.send_each(
            [[request(session, patch, params, json={name: value}) for value in pair]
             for (_, (params, _), (name, _), _), pair in zip(tried, pairs, strict=False)]
        )  # fmt: skip
        reads = at_once(session, together, [Call(get, params) for _, (params, _), _, _ in tried])
        done = []
        for (_, (_, body), (name, _), setup), pair, burst, read in zip(tried, pairs, bursts, reads, strict=False):
            counted(session, (patch, patch), burst)
            done.append(Try(burst, read, one_of(name, pair, body, burst, read, patch.method), [setup]))
        return done

    with made_items(session, SAME_FIELD, patch, collection, items) as (together, created):
        if created is not None:
            race(session, SAME_FIELD, patch, ctx.race_tries, wave)


def one_of(name: str, pair: tuple[Any, Any], body: JSON, burst: Burst, read: Exchange, method: str) -> str | None:
    """What PATCHes of `name` to the two values of `pair` at once broke, as `read` shows it. None if nothing."""
    others = {key: value for key, value in body.items() if key != name}
    broken = server_errors(burst) or not_written(burst, method)
    stored = read.json().get(name, "<missing>") if isinstance(read.json(), dict) else read.json()
    if broken is None and not any(same_value(value, stored) for value in pair):
        broken = f"PATCHes of `{name}` to {pair[0]!r} and {pair[1]!r} read back {stored!r}, neither of the two"
    if broken is None and differences(others, read.json()):
        broken = f"PATCHes of `{name}` alone changed other fields: {'; '.join(differences(others, read.json()))}"
    return broken


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
    create, get, delete = collection.create, collection.item_ops["get"], collection.item_ops["delete"]
    name = collection.identifier

    def wave(numbers: range) -> list[Try]:
        items = planned(ctx, collection, len(numbers))
        bursts = together.send_each(
            [[request(session, create, {}, json=body) for _ in range(CREATES)] for _, body in items]
        )
        reads = at_once(session, together, [Call(get, params) for params, _ in items])
        done = []
        for (params, _), burst, read in zip(items, bursts, reads, strict=False):
            counted(session, [create] * CREATES, burst)
            identifier = params[name]
            statuses = [each.response.status_code for each in burst.timed]
            broken = server_errors(burst)
            if broken is None and (statuses.count(201) != 1 or any(s not in (201, *REFUSED) for s in statuses)):
                refusals = " or ".join(map(str, REFUSED))
                broken = f"{CREATES} creates of {name}={identifier!r} answered {statuses}: not one 201 and {refusals}"
            if broken is None and read.status != 200:
                broken = f"the item created answered {read.status} to a read"
            done.append(Try(burst, read, broken))
        at_once(session, together, [Call(delete, params) for params, _ in items])
        for (params, _), burst in zip(items, bursts, strict=False):  # Each duplicate made needs one DELETE.
            for _ in range(sum(each.response.status_code == 201 for each in burst.timed) - 1):
                session.call(delete, params)
        return done

    with Together(session.limits, CREATES * wave_size(ctx.race_tries), staggered(session)) as together:
        race(session, DUPLICATE_CREATE, create, ctx.race_tries, wave)


def write_delete(ctx: Context, session: Session, collection: Collection) -> None:
    patch, get, delete = (collection.item_ops[m] for m in ("patch", "get", "delete"))

    def wave(numbers: range) -> Sequence[Try | None]:
        items = planned(ctx, collection, len(numbers))
        created = made(session, together, WRITE_DELETE, patch, collection, [body for _, body in items])
        if created is None:
            at_once(session, together, [Call(delete, params) for params, _ in items])
            return [None]
        changes = []
        for _, body in items:
            changed, names = changing(ctx, collection, body)
            changes.append({name: changed[name] for name in names[:1]})
        bursts = together.send_each(
            [[request(session, patch, params, json=change), request(session, delete, params)]
             for (params, _), change in zip(items, changes, strict=False)]
        )  # fmt: skip
        reads = at_once(session, together, [Call(get, params) for params, _ in items])
        judged = []
        for burst, read in zip(bursts, reads, strict=False):
            counted(session, (patch, delete), burst)
            judged.append(deleted_or_not(burst, read, (patch, delete)))
        # A later write must not bring a deleted item back, so each item gone gets a PATCH, at once.
        gone = [index for index, (broken, deleted) in enumerate(judged) if broken is None and deleted]
        again = at_once(session, together, [Call(patch, items[i][0], content={"json": changes[i]}) for i in gone])
        done = [
            Try(burst, read, broken, [setup])
            for burst, read, (broken, _), setup in zip(bursts, reads, judged, created, strict=False)
        ]
        for index, later in zip(gone, again, strict=False):
            if later.status != 404:
                broken = f"the DELETE succeeded, yet a later PATCH answered {later.status}"
                done[index] = Try(bursts[index], later, broken, [created[index]])
        away = {index for index, later in zip(gone, again, strict=False) if later.status == 404}
        at_once(
            session, together, [Call(delete, params) for index, (params, _) in enumerate(items) if index not in away]
        )
        return done

    with Together(session.limits, 2 * wave_size(ctx.race_tries), staggered(session)) as together:
        race(session, WRITE_DELETE, patch, ctx.race_tries, wave)


def deleted_or_not(burst: Burst, read: Exchange, ops: tuple[Operation, Operation]) -> tuple[str | None, bool]:
    """What a PATCH and a DELETE (`ops`) at once broke, and whether the item is gone.

    Their answers and `read` show what broke, which is None if nothing did. The item is gone when the
    DELETE succeeded and a read answers 404."""
    broken = server_errors(burst)
    for op, each in zip(ops, burst.timed, strict=True):
        if broken is None and each.response.status_code not in documented(op):
            broken = f"{op.method.upper()} answered {each.response.status_code}, a status it does not document"
    deleted = 200 <= burst.timed[1].response.status_code < 300
    gone = deleted and read.status == 404
    if broken is None and deleted and not gone:
        broken = f"the DELETE answered {burst.timed[1].response.status_code}, yet a read answers {read.status}"
    return broken, gone


CHECKS: dict[str, Check] = {
    LOST_UPDATE: lost_update,
    SAME_FIELD: same_field,
    DUPLICATE_CREATE: duplicate_create,
    WRITE_DELETE: write_delete,
}
TESTS = {name: partial(run, name) for name in CHECKS}
"""The domain tests' table entries (run/runner.py). There is one per check, so `--checks` runs only those chosen."""
