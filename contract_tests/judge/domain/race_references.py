"""The checks of concurrent writes across a reference (the others are races.py), tried as racing.py says:

- `concurrent_reference_delete`: a create of an item naming an owner (a product in a product line) and
  the DELETE of that owner at the same instant; never both succeed, which would leave a reference to
  nothing; each answer a status its operation documents, never a 5xx;
- `concurrent_sub_list_count`: several creates in one owner's sub-list at once; each succeeds, and the
  sub-list's `count` equals the items it lists, as many as were created (a count kept beside the rows
  and updated by a read-modify-write loses some).

Each try makes its own owner and removes what it made.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from contract_tests.client.burst import Timed
from contract_tests.client.together import Together
from contract_tests.judge.domain.data import Context
from contract_tests.judge.domain.http import Exchange, Session
from contract_tests.judge.domain.owners import dependant_collection
from contract_tests.judge.domain.racing import Try, counted, race, request, server_errors
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
            if all(op.id in session.surface.operations for op in ops):
                found.append((owner, child, sub_list))
    return found


def run(check: str, ctx: Context, session: Session) -> None:
    for owner, child, sub_list in pairs(ctx, session):
        judged = child.create if check == REFERENCE_DELETE else sub_list
        if ctx.selected(judged):
            CHECKS[check](ctx, session, owner, child, sub_list)


def documented(op: Operation) -> set[int]:
    return {int(status) for status in op.definition.get("responses", {}) if status.isdigit()}


def made_owner(ctx: Context, session: Session, owner: Collection, check: str, judged: Operation) -> Exchange | None:
    identifier = ctx.fresh_identifier(owner)
    return session.create_for(check, judged, owner, ctx.valid_body(owner, identifier), "the owner to race on")


def reference_delete(ctx: Context, session: Session, owner: Collection, child: Collection, sub_list: Operation) -> None:
    create, delete = child.create, owner.item_ops["delete"]
    statuses = {create.id: documented(create), delete.id: documented(delete)}

    def attempt(number: int) -> Try | None:
        made = made_owner(ctx, session, owner, REFERENCE_DELETE, create)
        if made is None:
            return None
        owner_id = made.json()[owner.identifier]
        child_id = ctx.fresh_identifier(child)
        body = {**ctx.valid_body(child, child_id), owner.identifier: owner_id}
        sent = [request(session, create, {}, json=body), request(session, delete, {owner.identifier: owner_id})]
        burst = together.send(sent)
        counted(session, (create, delete), burst)
        read = session.call(child.item_ops["get"], {child.identifier: child_id})
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
        session.call(child.item_ops["delete"], {child.identifier: child_id})
        session.call(delete, {owner.identifier: owner_id})
        return Try(burst, read, broken, [made])

    with Together(session.limits, 2) as together:
        race(session, REFERENCE_DELETE, create, ctx.race_tries, attempt)


def sub_list_count(ctx: Context, session: Session, owner: Collection, child: Collection, sub_list: Operation) -> None:
    def attempt(number: int) -> Try | None:
        made = made_owner(ctx, session, owner, SUB_LIST_COUNT, sub_list)
        if made is None:
            return None
        owner_id = made.json()[owner.identifier]
        children = [ctx.fresh_identifier(child) for _ in range(CREATES)]
        bodies = [{**ctx.valid_body(child, each), owner.identifier: owner_id} for each in children]
        burst = together.send([request(session, child.create, {}, json=body) for body in bodies])
        counted(session, [child.create] * CREATES, burst)
        read = session.call(sub_list, {owner.identifier: owner_id}, query={"page_size": CREATES * 2})
        broken = server_errors(burst) or listed_wrong(read, child.identifier, children, burst.timed)
        for each in children:
            session.call(child.item_ops["delete"], {child.identifier: each})
        session.call(owner.item_ops["delete"], {owner.identifier: owner_id})
        return Try(burst, read, broken, [made])

    with Together(session.limits, CREATES) as together:
        race(session, SUB_LIST_COUNT, sub_list, ctx.race_tries, attempt)


def listed_wrong(read: Exchange, name: str, children: list[Any], timed: Sequence[Timed]) -> str | None:
    """What the sub-list read after the creates gets wrong (None: its count, its items and the creates agree)."""
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
