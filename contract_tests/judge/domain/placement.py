"""Where an item falls in a list: the page its documented order (`x-order-by`) puts it on.

It is a binary search over pages of the largest size the list serves, so that finding one item in a
list of any length costs a few requests. A page guides it only where both orders a list may be in
(code-point and case-folded) agree. Where the order is not the documented one, the search cannot
trust it and walks the pages instead, up to `WALK_LIMIT` of them. `list_order` judges the order.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from contract_tests.judge.domain.http import Exchange, Session
from contract_tests.spec import JSON, Operation, Spec

WALK_LIMIT = 10
FULL_WALK_PAGES = 10
"""Pages a walk of a whole list reads at most (pagination_walk, list_order).

A longer list is sampled, so any length costs a bounded number of requests."""


@dataclass(frozen=True)
class Placement:
    """The page that shows the item (`item` set), or the last page looked at (`item` None)."""

    op: Operation
    exchange: Exchange
    item: JSON | None


def results(exchange: Exchange) -> list[Any] | None:
    body = exchange.json()
    if exchange.status != 200 or not isinstance(body, dict) or not isinstance(body.get("results"), list):
        return None
    return list(body["results"])


def find(items: list[Any], name: str, value: Any) -> JSON | None:
    return next((item for item in items if isinstance(item, dict) and item.get(name) == value), None)


def locate(spec: Spec, session: Session, op: Operation, params: dict[str, Any], name: str, value: Any) -> Placement:
    """The page of the list `op` (at `params`) showing the item whose `name` is `value`.

    It is found through the list's order when the spec orders it by `name` ascending, and otherwise by
    walking. The pages are of the list's maximum size, or else of its default size."""
    maximum, ordered = spec.page_size_maximum(op), spec.order_by(op) == name
    size = {"page_size": maximum} if maximum is not None else {}
    first = session.call(op, params, query={"page": 1, **size})
    items = results(first)
    if items is None:
        return Placement(op, first, None)
    found = find(items, name, value)
    count = first.json().get("count")
    if found is not None or not items or not isinstance(count, int):
        return Placement(op, first, found)
    pages = math.ceil(count / len(items))
    fetched = {1: first}
    low, high = (2, pages) if ordered else (1, 0)
    while low <= high:
        middle = (low + high) // 2
        fetched[middle] = session.call(op, params, query={"page": middle, **size})
        items = results(fetched[middle])
        found = find(items or [], name, value)
        if found is not None:
            return Placement(op, fetched[middle], found)
        low, high = narrowed(items, name, value, middle, low, high)
    last = first
    for number in range(2, min(pages, WALK_LIMIT) + 1):
        last = fetched.get(number) or session.call(op, params, query={"page": number, **size})
        found = find(results(last) or [], name, value)
        if found is not None:
            return Placement(op, last, found)
    return Placement(op, last, None)


def narrowed(items: list[Any] | None, name: str, value: Any, middle: int, low: int, high: int) -> tuple[int, int]:
    """The pages left to search once page `middle` lacks the item. (1, 0) when its keys cannot guide."""
    keys = [item.get(name) if isinstance(item, dict) else None for item in items or []]
    if keys and before(value, keys[0]):
        return low, middle - 1
    if keys and before(keys[-1], value):
        return middle + 1, high
    return 1, 0


def before(one: Any, other: Any) -> bool:
    """`one` sorts before `other` in code-point order and, for strings, in case-folded order too.

    These are the two orders a list may be in (`list-order`). Where they disagree, the keys cannot guide
    the search."""
    try:
        if isinstance(one, str) and isinstance(other, str):
            return one < other and one.casefold() < other.casefold()
        return bool(one < other)
    except TypeError:  # The keys are of another type than the value.
        return False
