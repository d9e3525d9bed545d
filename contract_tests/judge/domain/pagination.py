"""`pagination_walk`: every list and sub-list, walked through its links both ways (and `list_scoping`).

The page size is about a third of the list, never above the spec's `x-clamped-maximum`. The walk goes
forwards through `next`, and back from the last page through `previous`. `previous` of page N leads to
page N-1 with the same items as walking forwards. For page 1, a link without `page` is accepted.

Both ways must agree with the list.
- Every page gives the same count.
- No page holds more than page_size items.
- `previous` is null exactly on the first page, and `next` exactly on the last.
- Links are absolute, on the surface that was called, and keep page_size.
- The pages hold count distinct items in all, none repeated, none missing.

A list of more than ten pages is sampled: the first, the second, three in the middle, the second-to-last,
the last, and the links between them. So any length costs a bounded number of requests.

Before the walk comes the decision `page-size`.
- Page 1 without `page_size` holds the parameter's `default`, or the whole of a shorter list.
- A `page_size` one above its `x-clamped-maximum` is clamped, not refused. The answer is a 200 with at
  most the maximum.

After a walk that held, the page after the last holds nothing: 404, or a 200 with no results, as the
decision `page-past-the-end` admits.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

from contract_tests.decisions import PAGE_PAST_THE_END, admits
from contract_tests.judge.domain.data import Context
from contract_tests.judge.domain.http import Exchange, Session
from contract_tests.judge.domain.owners import owner
from contract_tests.judge.domain.placement import FULL_WALK_PAGES
from contract_tests.spec import Operation

CHECK = "pagination_walk"


@dataclass(frozen=True)
class Walk:
    """One list walked. It holds where, at which page size, the count its first page gave, and the URL
    every `next` and `previous` link must start with. Every page is judged against these."""

    session: Session
    op: Operation
    params: dict[str, Any]
    size: int
    count: int
    list_url: str


def run(ctx: Context, session: Session) -> None:
    for op in ctx.spec.lists:
        if session.serves(op) and ctx.selected(op) and ctx.operation_is_mine(op):
            params, made = owner(ctx, session, op)
            if params is None:
                reason = "no owner to list the items of, and none could be created"
                session.ledger.skipped(session.surface.name, op.id, CHECK, reason)
                continue
            maximum, default = ctx.spec.page_size_maximum(op), ctx.spec.page_size_default(op)
            walk(session, op, params, maximum, default, admits(ctx.spec, PAGE_PAST_THE_END))
            if made is not None:
                made.delete(session)


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


def page_size(count: int, maximum: int | None) -> int:
    """About a third of the list, so a walk has several pages, never above the list's maximum."""
    size = max(1, math.ceil(count / 3))
    return min(size, maximum) if maximum is not None else size


def link_page(link: Any) -> int | None:
    """The page a link leads to, or None when unreadable. A link without `page` leads to page 1."""
    values = parse_qs(urlsplit(str(link)).query).get("page", ["1"])
    return int(values[-1]) if len(values) == 1 and values[-1].isdecimal() else None


def items_of(exchange: Exchange) -> list[str]:
    body = exchange.json()
    return [json.dumps(item, sort_keys=True) for item in body["results"]]


def walk(
    session: Session,
    op: Operation,
    params: dict[str, Any],
    maximum: int | None,
    default: int | None,
    past_end: tuple[Any, ...],
) -> None:
    list_url = session.url(op, params)
    first = session.call(op, params)
    count = (first.json() or {}).get("count") if isinstance(first.json(), dict) else None
    if not isinstance(count, int):
        session.judge(CHECK, op, first, f"the list answered HTTP {first.status} without a count")
        return
    if not session.judge(CHECK, op, first, default_problem(first, count, default, maximum)):
        return
    if maximum is not None and not clamped(session, op, params, maximum):
        return
    size = page_size(count, maximum)
    exchange = session.call(op, params, query={"page_size": size})
    if not session.judge(CHECK, op, exchange, page_problem(exchange, 1, size, count, list_url)):
        return
    shown = len(exchange.json()["results"])
    per_page = shown if count > shown else size  # A backend may clamp below the documented maximum.
    pages = math.ceil(count / per_page) if count else 1
    walking = Walk(session, op, params, size, count, list_url)
    if pages <= FULL_WALK_PAGES:
        forwards = walk_forwards(walking, exchange, pages)
        walked = forwards is not None and walk_backwards(walking, forwards)
    else:
        walked = sample(walking, exchange, per_page, pages)
    if walked:
        past_the_end(walking, pages, past_end)


def past_the_end(walking: Walk, pages: int, statuses: tuple[Any, ...]) -> None:
    """The page after the last holds nothing: it is answered with one of the `statuses` the decision
    `page-past-the-end` admits (404, or a 200 page with no results). A page that serves items again
    (the last page, or the first) sends a client walking by `page` round for ever."""
    query = {"page": pages + 1, "page_size": walking.size}
    exchange = walking.session.call(walking.op, walking.params, query=query)
    body = exchange.json()
    results = body.get("results") if isinstance(body, dict) else None
    what = f"page {pages + 1}, past the last of count={walking.count},"
    broken = None
    if exchange.status not in statuses:
        broken = f"{what} answered HTTP {exchange.status}, not one of {list(statuses)}"
    elif 200 <= exchange.status < 300 and results != []:
        shown = f"{len(results)} results" if isinstance(results, list) else "no list of results"
        broken = f"{what} answered HTTP {exchange.status} with {shown}, not an empty page"
    walking.session.judge(CHECK, walking.op, exchange, broken)


def default_problem(first: Exchange, count: int, default: int | None, maximum: int | None) -> str | None:
    """Page 1 without a `page_size` holds the spec's default (`page-size`), or the whole of a shorter list."""
    results = first.json().get("results")
    if default is None or not isinstance(results, list):
        return None
    expected = min(count, default, maximum or default)
    if len(results) == expected:
        return None
    return f"page 1 without page_size holds {len(results)} results, not the default {default} (count={count})"


def clamped(session: Session, op: Operation, params: dict[str, Any], maximum: int) -> bool:
    """A `page_size` one above the spec's maximum is clamped, not refused. The page holds at most `maximum`."""
    exchange = session.call(op, params, query={"page_size": maximum + 1})
    results = (exchange.json() or {}).get("results") if isinstance(exchange.json(), dict) else None
    if exchange.status != 200 or not isinstance(results, list):
        broken: str | None = f"page_size={maximum + 1} (above the maximum {maximum}) answered HTTP {exchange.status}"
    elif len(results) > maximum:
        broken = f"page_size={maximum + 1} gave {len(results)} results, not at most the maximum {maximum}"
    else:
        broken = None
    return session.judge(CHECK, op, exchange, broken)


def walk_forwards(walking: Walk, exchange: Exchange, pages: int) -> list[Exchange] | None:
    """Page 1 to the last through `next`. The answer is the pages when they tile the list, else None (reported)."""
    session, op, params = walking.session, walking.op, walking.params
    size, count, list_url = walking.size, walking.count, walking.list_url
    walked = [exchange]
    for number in range(1, pages + 2):
        problem = page_problem(exchange, number, size, count, list_url)
        if not session.judge(CHECK, op, exchange, problem):
            return None
        body = exchange.json()
        scoping(session, op, params, exchange, body["results"])
        if body.get("next") is None:
            break
        if number == pages:
            session.judge(CHECK, op, exchange, f"`next` is set on page {number}, the last of count={count}")
            return None
        exchange = session.call(op, url=str(body["next"]))
        walked.append(exchange)
    seen = [item for page in walked for item in items_of(page)]
    if len(walked) != pages:
        session.judge(CHECK, op, exchange, f"`next` is null on page {len(walked)}, count={count} needs {pages} pages")
        return None
    if len(seen) != count or len(set(seen)) != len(seen):
        repeated = len(seen) - len(set(seen))
        broken = f"the walk gave {len(seen)} items ({repeated} repeated), count is {count}"
        session.judge(CHECK, op, exchange, broken)
        return None
    return walked


def walk_backwards(walking: Walk, forwards: list[Exchange]) -> bool:
    """From the last page back to page 1 through `previous`. Each leads to the page before, with the same items.
    False once a violation is judged."""
    session, op = walking.session, walking.op
    size, count, list_url = walking.size, walking.count, walking.list_url
    exchange = forwards[-1]
    for number in range(len(forwards), 1, -1):
        link = exchange.json().get("previous")
        target = link_page(link)
        if target != number - 1:
            broken = f"`previous` of page {number} leads to page {target}, not {number - 1}: {link}"
            return session.judge(CHECK, op, exchange, broken)
        exchange = session.call(op, url=str(link))
        problem = page_problem(exchange, number - 1, size, count, list_url)
        if problem is None and items_of(exchange) != items_of(forwards[number - 2]):
            problem = f"`previous` of page {number} gave other items than page {number - 1} walking forwards"
        if not session.judge(CHECK, op, exchange, problem):
            return False
    return True


def sample(walking: Walk, first: Exchange, per_page: int, pages: int) -> bool:
    """A long list, sampled at the first, second, a few middle, second-to-last and last pages, with their links.
    False once a violation is judged."""
    session, op, params = walking.session, walking.op, walking.params
    size, count, list_url = walking.size, walking.count, walking.list_url
    numbers = sorted({1, 2, pages // 3, pages // 2, 2 * pages // 3, pages - 1, pages})
    fetched = {1: first}
    for number in numbers[1:]:
        fetched[number] = session.call(op, params, query={"page": number, "page_size": size})
    seen: list[str] = []
    for number in numbers:
        exchange = fetched[number]
        problem = page_problem(exchange, number, size, count, list_url)
        expected = per_page if number < pages else count - per_page * (pages - 1)
        if problem is None and len(exchange.json()["results"]) != expected:
            problem = f"page {number} of {pages} holds {len(exchange.json()['results'])} items, not {expected}"
        if problem is None and (exchange.json().get("next") is None) != (number == pages):
            problem = f"`next` must be null exactly on page {pages}; page {number} has {exchange.json().get('next')!r}"
        for which, target in (("next", number + 1), ("previous", number - 1)):
            link = exchange.json().get(which) if problem is None else None
            if link is not None and link_page(link) != target:
                problem = f"`{which}` of page {number} leads to page {link_page(link)}, not {target}: {link}"
        if not session.judge(CHECK, op, exchange, problem):
            return False
        scoping(session, op, params, exchange, exchange.json()["results"])
        seen.extend(items_of(exchange))
    if len(set(seen)) != len(seen):
        return session.judge(CHECK, op, first, f"the sampled pages {numbers} repeat {len(seen) - len(set(seen))} items")
    for start, which, target in ((1, "next", 2), (pages, "previous", pages - 1), (2, "previous", 1)):
        followed = session.call(op, url=str(fetched[start].json()[which]))
        same = followed.status == 200 and items_of(followed) == items_of(fetched[target])
        broken = None if same else f"`{which}` of page {start} does not give page {target}'s items"
        if not session.judge(CHECK, op, followed, broken):
            return False
    return True
