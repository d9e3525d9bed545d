"""`list_order`: a list's order is the documented one, the same on every read, at every page size.

Each list names its order in the spec (`x-order-by`), which is ascending. Strings are in code-point
order, or in the order of their case-folded form where the service ignores letter case, as
`identifiers-exact` admits.

Where the test can create the list's items, it first adds some in an order their identifiers do not
sort in. Their letter cases sort differently in code-point order and in case-folded order (`STEMS`).
So a list served in insertion order, or in any other order, shows them out of place.

The list is then read whole by page number at several page sizes. They are the largest it serves,
about a half of it and about a fifth of it.
- Each walk returns every item exactly once.
- Each walk is ascending by the key in one of the two orders throughout. A walk mixing them is
  reported.
- Every walk, and a second read of the first page, gives the same sequence. So ties of the
  case-folded order keep one order.

A list longer than `FULL_WALK_PAGES` pages of the largest size is judged on its first two pages. The
items made are deleted afterwards.
"""

from __future__ import annotations

import itertools
import json
import math
from typing import Any

from contract_tests.judge.domain.data import Context
from contract_tests.judge.domain.http import Exchange, Session
from contract_tests.judge.domain.owners import Made, dependant_collection, owner
from contract_tests.judge.domain.placement import FULL_WALK_PAGES, results
from contract_tests.spec import Collection, Operation

CHECK = "list_order"
STEMS = ("b", "B", "a")
"""Created in this order. Code-point order is B, a, b, case-folded order is a, b, B, and insertion order is
b, B, a."""
FRACTIONS = (2, 5)


def run(ctx: Context, session: Session) -> None:
    for op in ctx.spec.lists:
        if not session.serves(op) or not ctx.selected(op) or not ctx.operation_is_mine(op):
            continue
        key, maximum = ctx.spec.order_by(op), ctx.spec.page_size_maximum(op)
        if key is None or maximum is None:
            reason = "the spec names no order (`x-order-by`) or no largest page (`x-clamped-maximum`) for this list"
            session.ledger.skipped(session.surface.name, op.id, CHECK, reason)
            continue
        params, made_owner = owner(ctx, session, op)
        if params is None:
            session.ledger.skipped(session.surface.name, op.id, CHECK, "no owner to list the items of")
            continue
        made = out_of_order(ctx, session, op, params)
        judge_order(session, op, params, key, maximum, [step for _, step in made])
        for item in reversed(made):
            item[0].delete(session)
        if made_owner is not None:
            made_owner.delete(session)


def items_of(ctx: Context, op: Operation, params: dict[str, Any]) -> Collection | None:
    """The collection whose items `op` lists, when the client creates them."""
    for collection in ctx.spec.collections:
        if collection.list_op is op:
            return collection
        if op in collection.sub_lists:
            return dependant_collection(ctx, collection, op)
    return None


def out_of_order(ctx: Context, session: Session, op: Operation, params: dict[str, Any]) -> list[tuple[Made, Exchange]]:
    """Items of the list created in an order their identifiers do not sort in."""
    collection = items_of(ctx, op, params)
    if collection is None or not session.serves(collection.create):
        return []
    prop = collection.request_schema["properties"][collection.identifier]
    if prop.get("type") == "integer":
        first, second = ctx.fresh_identifier(collection), ctx.fresh_identifier(collection)
        identifiers = [max(first, second), min(first, second)]
    else:
        identifiers = [ctx.known.identities.string(prop, stem) for stem in STEMS]
    made = []
    for identifier in identifiers:
        created = session.call(collection.create, json={**ctx.valid_body(collection, identifier), **params})
        if created.status == 201:
            made.append((Made(collection, identifier), created))
    return made


def sizes(count: int, maximum: int) -> list[int]:
    """Page sizes whose walks stay within `FULL_WALK_PAGES` pages. They are the largest, and fractions of the list."""
    found = [maximum, *(max(1, math.ceil(count / part)) for part in FRACTIONS)]
    fitting = [size for size in found if size <= maximum and math.ceil(count / size) <= FULL_WALK_PAGES]
    return list(dict.fromkeys(fitting))


def judge_order(
    session: Session, op: Operation, params: dict[str, Any], key: str, maximum: int, setup: list[Exchange]
) -> None:
    first = session.call(op, params, query={"page": 1, "page_size": maximum})
    body = first.json()
    count = body.get("count") if isinstance(body, dict) else None
    if results(first) is None or not isinstance(count, int):
        session.judge(CHECK, op, first, f"the list answered HTTP {first.status} without a count", setup)
        return
    if math.ceil(count / maximum) > FULL_WALK_PAGES:
        sampled = walk(session, op, params, maximum, 2, first)
        if sampled is not None:
            session.judge(CHECK, op, sampled[-1][0], misordered(sampled, key), setup)
        return
    reference: list[str] | None = None
    for size in sizes(count, maximum):
        walked = walk(session, op, params, size, math.ceil(count / size), first if size == maximum else None)
        if walked is None:
            session.judge(CHECK, op, first, f"a walk at page_size={size} did not answer every page", setup)
            return
        last = walked[-1][0]
        sequence = [json.dumps(item, sort_keys=True) for _, item in walked_items(walked)]
        broken = misordered(walked, key)
        if broken is None and (len(sequence) != count or len(set(sequence)) != len(sequence)):
            repeated = len(sequence) - len(set(sequence))
            broken = f"a walk at page_size={size} gave {len(sequence)} items ({repeated} repeated), count is {count}"
        if broken is None and reference is not None and sequence != reference:
            broken = f"a walk at page_size={size} gave the items in another order than at page_size={maximum}"
        if not session.judge(CHECK, op, last, broken, setup):
            return
        reference = reference or sequence
    again = session.call(op, params, query={"page": 1, "page_size": maximum})
    same = [json.dumps(item, sort_keys=True) for item in results(again) or []] == (reference or [])[:maximum]
    broken = None if same else "a second read of page 1 gave other items or another order"
    session.judge(CHECK, op, again, broken, setup)


Walked = list[tuple[Exchange, list[Any]]]


def walk(
    session: Session, op: Operation, params: dict[str, Any], size: int, pages: int, first: Exchange | None
) -> Walked | None:
    """Pages 1 to `pages` at `size`, with page 1 given or read. None when a page is not a list."""
    walked: Walked = []
    for number in range(1, max(pages, 1) + 1):
        exchange = first if number == 1 and first is not None else None
        exchange = exchange or session.call(op, params, query={"page": number, "page_size": size})
        items = results(exchange)
        if items is None:
            return None
        walked.append((exchange, items))
    return walked


def walked_items(walked: Walked) -> list[tuple[int, Any]]:
    return [(number, item) for number, (_, items) in enumerate(walked, 1) for item in items]


def code_point(before: Any, after: Any) -> bool:
    """`before` and `after` are in ascending order of their values (strings by code point)."""
    try:
        return bool(before < after)
    except TypeError:
        return False


def case_folded(before: Any, after: Any) -> bool:
    """Two strings in ascending order of their case-folded form, or a tie.

    A tie is the same folded form in two spellings. The comparison of the walks holds its order fixed
    (`identifiers-exact`)."""
    if not isinstance(before, str) or not isinstance(after, str):
        return code_point(before, after)
    return before != after and before.casefold() <= after.casefold()


ORDERS = (code_point, case_folded)
"""The orders a list may be in (`list-order/ascending`). Each is the one order of a whole walk."""


def misordered(walked: Walked, key: str) -> str | None:
    """Where the items of the walk are not in ascending order of `key` in any one of `ORDERS`, if anywhere."""
    keyed: list[tuple[int, Any]] = [
        (number, item.get(key) if isinstance(item, dict) else None) for number, item in walked_items(walked)
    ]
    pairs = list(itertools.pairwise(keyed))
    if any(all(ascending(before, after) for (_, before), (_, after) in pairs) for ascending in ORDERS):
        return None
    size = len(walked[0][1])

    def shown(pair: tuple[tuple[int, Any], tuple[int, Any]]) -> str:
        (page, before), (next_page, after) = pair
        where = f"page {page}" if page == next_page else f"pages {page} and {next_page}"
        return f"{key} {before!r} comes before {after!r} ({where} at page_size={size})"

    neither = [pair for pair in pairs if not any(ascending(pair[0][1], pair[1][1]) for ascending in ORDERS)]
    if neither:
        return f"{shown(neither[0])}: ascending in neither order (code-point, case-folded)"
    code_point_only = next(pair for pair in pairs if not case_folded(pair[0][1], pair[1][1]))
    folded_only = next(pair for pair in pairs if not code_point(pair[0][1], pair[1][1]))
    mixed = f"{shown(folded_only)} is case-folded order, {shown(code_point_only)} code-point order"
    return f"the walk mixes two orders: {mixed}"
