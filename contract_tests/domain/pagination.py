"""`pagination_walk`: every list, walked page by page through its `next` links (and `list_scoping`).

The walk must agree with itself: the same count on every page, no page above page_size, `previous`
null exactly on the first page and `next` exactly on the last, absolute links on the surface that was
called that keep page_size, and count distinct items in all, none repeated, none missing.
"""

from __future__ import annotations

import json
import math
from typing import Any
from urllib.parse import parse_qs, urlsplit

from contract_tests.domain.data import Context
from contract_tests.domain.http import Exchange, Session
from contract_tests.spec import Operation

CHECK = "pagination_walk"
OWNER_CANDIDATES = 20


def run(ctx: Context, session: Session) -> None:
    for op in ctx.spec.lists:
        if op.id in session.surface.operations and ctx.selected(op):
            params = owner(ctx, session, op)
            if params is not None:
                walk(session, op, params)


def owner(ctx: Context, session: Session, op: Operation) -> dict[str, Any] | None:
    """Path parameters naming an owner with at least two items (else the first owner), {} for a top list."""
    if not op.path_parameters:
        return {}
    (name,) = op.path_parameters
    collection = next(c for c in ctx.spec.collections if c.identifier == name)
    owners = session.call(collection.list_op, query={"page_size": OWNER_CANDIDATES}).json()
    candidates = [item[name] for item in (owners or {}).get("results", []) if isinstance(item, dict) and name in item]
    for candidate in candidates:
        page = session.call(op, {name: candidate}, query={"page_size": 1}).json()
        if isinstance(page, dict) and isinstance(page.get("count"), int) and page["count"] >= 2:
            return {name: candidate}
    return {name: candidates[0]} if candidates else None


def page_problem(exchange: Exchange, number: int, size: int, count: int | None, list_url: str) -> str | None:
    """What is wrong with page `number` of a walk, if anything."""
    if exchange.status != 200:
        return f"page {number} answered HTTP {exchange.status}"
    body = exchange.json()
    if not isinstance(body, dict) or not isinstance(body.get("results"), list):
        return f"page {number} is not a paginated envelope"
    if count is not None and body.get("count") != count:
        return f"count changed from {count} to {body.get('count')} on page {number}"
    if len(body["results"]) > size:
        return f"page {number} holds {len(body['results'])} results, page_size is {size}"
    if (body.get("previous") is None) != (number == 1):
        return f"`previous` must be null exactly on page 1; page {number} has {body.get('previous')!r}"
    for which in ("next", "previous"):
        link = body.get(which)
        if link is None:
            continue
        parsed = urlsplit(str(link))
        if not parsed.scheme or not str(link).startswith(list_url):
            return f"`{which}` of page {number} is not an absolute URL of this list on this surface: {link}"
        if parse_qs(parsed.query).get("page_size") != [str(size)]:
            return f"`{which}` of page {number} does not keep page_size={size}: {link}"
    return None


def scoping(session: Session, op: Operation, params: dict[str, Any], exchange: Exchange, items: list[Any]) -> None:
    """`list_scoping` on each page of a sub-list: its items carry the owner's identifier."""
    for name, value in params.items():
        foreign = [item.get(name) for item in items if not isinstance(item, dict) or item.get(name) != value]
        broken = f"items with {name}={foreign[0]!r} are listed under {name}={value!r}" if foreign else None
        session.judge("list_scoping", op, exchange, broken)


def walk(session: Session, op: Operation, params: dict[str, Any]) -> None:
    list_url = session.url(op, params)
    first = session.call(op, params)
    count = (first.json() or {}).get("count") if isinstance(first.json(), dict) else None
    if not isinstance(count, int):
        session.judge(CHECK, op, first, f"the list answered HTTP {first.status} without a count")
        return
    size = max(1, math.ceil(count / 3))
    exchange = session.call(op, params, query={"page_size": size})
    seen: list[str] = []
    pages = math.ceil(count / size) if count else 1
    for number in range(1, pages + 2):
        problem = page_problem(exchange, number, size, count, list_url)
        if not session.judge(CHECK, op, exchange, problem):
            return
        body = exchange.json()
        scoping(session, op, params, exchange, body["results"])
        seen.extend(json.dumps(item, sort_keys=True) for item in body["results"])
        if body.get("next") is None:
            break
        if number == pages:
            session.judge(CHECK, op, exchange, f"`next` is set on page {number}, the last of count={count}")
            return
        exchange = session.call(op, url=str(body["next"]))
    if number != pages:
        session.judge(CHECK, op, exchange, f"`next` is null on page {number}, count={count} needs {pages} pages")
    elif len(seen) != count or len(set(seen)) != len(seen):
        repeated = len(seen) - len(set(seen))
        session.judge(CHECK, op, exchange, f"the walk gave {len(seen)} items ({repeated} repeated), count is {count}")
