"""The checks of concurrent writes across a reference, tried as racing.py says. The others are in races.py.

- `concurrent_reference_delete` sends a create of an item naming an owner, such as a product in a
  product line, and the DELETE of that owner at the same instant. Never do both succeed, which would
  leave a reference to nothing. Each answer is a status its operation documents, never a 5xx.
- `concurrent_sub_list_count` sends several creates in one owner's sub-list at once. Each succeeds,
  and the sub-list's `count` equals the items it lists, as many as were created. A count kept beside
  the rows and updated by a read-modify-write loses some.

Each try makes its own owner, and a wave makes them at once. The wave removes what it made.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from contract_tests.client import arrival
from contract_tests.client.burst import Timed
from contract_tests.client.together import Together
from contract_tests.judge.domain.data import Context
from contract_tests.judge.domain.http import Exchange, Session
from contract_tests.judge.domain.owners import dependant_collection
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
from contract_tests.spec import Collection, Operation

REFERENCE_DELETE = "concurrent_reference_delete"
SUB_LIST_COUNT = "concurrent_sub_list_count"
CREATES = 3
"""Items created at once in one sub-list."""


def pairs(ctx: Context, session: Session) -> list[tuple[Collection, Collection, Operation]]:
    """(owner, dependant, sub-list) where the client creates both and the surface serves what a try needs."""
    found = []
    for owner in ctx.spec.collections:
        for sub_list in owner.sub_lists:
            child = dependant_collection(ctx, owner, sub_list)
            if child is None or not ctx.collection_is_mine(child):
                continue
            ops = [owner.create, owner.item_ops["delete"], child.create, child.item_ops["get"], sub_list]
            ops.append(child.item_ops["delete"])
            if session.serves(*ops):
                found.append((owner, child, sub_list))
    return found


def run(check: str, ctx: Context, session: Session) -> None:
    for owner, child, sub_list in pairs(ctx, session):
        judged = child.create if check == REFERENCE_DELETE else sub_list
        if ctx.selected(judged) and not one_at_a_time(session, check, judged, owner, arrival.probed):
            CHECKS[check](ctx, session, owner, child, sub_list)


# Seven parameters because: they are the race's context, session and sender, and what the wave makes for
# which check. The two callers pass them as they hold them, and a value grouping them would serve this call alone.
def owners(
    ctx: Context, session: Session, together: Together, owner: Collection, check: str, judged: Operation, count: int
) -> Sequence[Exchange] | None:
    """A wave's `count` owners, one a try, created at once.

    None when the target refused one. The check is then listed as not exercised at `judged`, and those made
    are deleted."""
    items = planned(ctx, owner, count)
    created = made(session, together, check, judged, owner, [body for _, body in items])
    if created is None:
        at_once(session, together, [Call(owner.item_ops["delete"], params) for params, _ in items])
    return created


def reference_delete(ctx: Context, session: Session, owner: Collection, child: Collection, sub_list: Operation) -> None:
    create, delete = child.create, owner.item_ops["delete"]
    statuses = {create.id: documented(create), delete.id: documented(delete)}

    def wave(numbers: range) -> Sequence[Try | None]:
        made_owners = owners(ctx, session, together, owner, REFERENCE_DELETE, create, len(numbers))
        if made_owners is None:
            return [None]
        owner_ids = [each.json()[owner.identifier] for each in made_owners]
        child_ids = [ctx.fresh_identifier(child) for _ in made_owners]
        bursts = together.send_each(
            [
                [
                    request(session, create, {}, json={**ctx.valid_body(child, child_id), owner.identifier: owner_id}),
                    request(session, delete, {owner.identifier: owner_id}),
                ]
                for owner_id, child_id in zip(owner_ids, child_ids, strict=True)
            ]
        )
        reads = at_once(
            session, together, [Call(child.item_ops["get"], {child.identifier: each}) for each in child_ids]
        )
        done: list[Try | None] = []
        racing = zip(made_owners, owner_ids, child_ids, bursts, reads, strict=True)
        for setup, owner_id, child_id, burst, read in racing:
            counted(session, (create, delete), burst)
            broken = server_errors(burst)
            for op, each in zip((create, delete), burst.timed, strict=True):
                if broken is None and each.response.status_code not in statuses[op.id]:
                    broken = f"{op.method.upper()} answered {each.response.status_code}, a status it does not document"
            created, deleted = (200 <= each.response.status_code < 300 for each in burst.timed)
            if broken is None and created and deleted:
                broken = (
                    f"both succeeded: {child.identifier}={child_id!r} was created in {owner.identifier}={owner_id!r} "
                    f"and {owner.identifier}={owner_id!r} deleted, leaving a reference to nothing "
                    f"(the item reads {read.status})"
                )
            done.append(Try(burst, read, broken, [setup]))
        at_once(session, together, [Call(child.item_ops["delete"], {child.identifier: each}) for each in child_ids])
        at_once(session, together, [Call(delete, {owner.identifier: each}) for each in owner_ids])
        return done

    with Together(session.limits, 2 * wave_size(ctx.race_tries), staggered(session)) as together:
        race(session, REFERENCE_DELETE, create, ctx.race_tries, wave)


def sub_list_count(ctx: Context, session: Session, owner: Collection, child: Collection, sub_list: Operation) -> None:
    def wave(numbers: range) -> Sequence[Try | None]:
        made_owners = owners(ctx, session, together, owner, SUB_LIST_COUNT, sub_list, len(numbers))
        if made_owners is None:
            return [None]
        owner_ids = [each.json()[owner.identifier] for each in made_owners]
        children = [[ctx.fresh_identifier(child) for _ in range(CREATES)] for _ in made_owners]
        bursts = together.send_each(
            [
                [
                    request(session, child.create, {}, json={**ctx.valid_body(child, each), owner.identifier: owner_id})
                    for each in ids
                ]
                for owner_id, ids in zip(owner_ids, children, strict=True)
            ]
        )
        query = {"page_size": CREATES * 2}
        reads = at_once(session, together, [Call(sub_list, {owner.identifier: each}, query) for each in owner_ids])
        done: list[Try | None] = []
        for setup, ids, burst, read in zip(made_owners, children, bursts, reads, strict=True):
            counted(session, [child.create] * CREATES, burst)
            broken = server_errors(burst) or listed_wrong(read, child.identifier, ids, burst.timed)
            done.append(Try(burst, read, broken, [setup]))
        deletes = [Call(child.item_ops["delete"], {child.identifier: each}) for ids in children for each in ids]
        at_once(session, together, deletes)
        at_once(session, together, [Call(owner.item_ops["delete"], {owner.identifier: each}) for each in owner_ids])
        return done

    with Together(session.limits, CREATES * wave_size(ctx.race_tries), staggered(session)) as together:
        race(session, SUB_LIST_COUNT, sub_list, ctx.race_tries, wave)


def listed_wrong(read: Exchange, name: str, children: list[Any], timed: Sequence[Timed]) -> str | None:
    """What the sub-list read after the creates gets wrong. None when its count, its items and the creates agree."""
    failed = [each.response.status_code for each in timed if each.response.status_code != 201]
    if failed:
        return f"{CREATES} creates of distinct items in one sub-list at once: {len(failed)} answered {failed}, not 201"
    page = read.json()
    results = page.get("results") if isinstance(page, dict) else None
    if read.status != 200 or not isinstance(results, list):
        return f"the sub-list answered {read.status} after the creates"
    listed = [item.get(name) for item in results if isinstance(item, dict)]
    count = page.get("count")
    if count != len(listed) or sorted(map(str, listed)) != sorted(map(str, children)):
        return f"after {CREATES} creates at once, the sub-list counts {count!r} and lists {listed!r}"
    return None


Check = Callable[[Context, Session, Collection, Collection, Operation], None]
CHECKS: dict[str, Check] = {REFERENCE_DELETE: reference_delete, SUB_LIST_COUNT: sub_list_count}
TESTS = {name: partial(run, name) for name in CHECKS}
"""The domain tests' table entries (run/runner.py), one per check."""
