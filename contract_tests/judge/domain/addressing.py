"""`identifier_addressable`: an item the service creates can be addressed at its own path.

For every collection with a string identifier, items are created whose identifiers hold each class of
characters URLs treat specially, within the field's bounds. Each create must be refused (4xx, nothing
stored), or the item must be fully addressable. Then GET, PUT, PATCH and DELETE all work on it at the
percent-encoded path. Every reserved character and "." itself are encoded there, since clients and
servers fold dot segments. A service that normalises the identifier (trims white space) is followed at
the identifier it answered.

For integer identifiers, the values at the bounds that matter to databases and JSON are served or
refused with a 4xx, never a 5xx. They are 0, 1, 2^31-1, 2^31, 2^53, 2^63-1, and 2^63, one past int64.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from contract_tests.judge.domain.data import Context, changed_body
from contract_tests.judge.domain.http import Exchange, Session
from contract_tests.spec import Collection, Operation

CHECK = "identifier_addressable"
INTEGER_BOUNDS = (0, 1, 2**31 - 1, 2**31, 2**53, 2**63 - 1, 2**63)
"""The last is one past `format: int64`. By the decision `integers-out-of-bounds`, a path parameter beyond
it is 404."""
# Each entry is what the identifier holds, the characters, and where they go.
SPECIAL = (
    ('a dot "."', ".", "middle"),
    ('a double dot ".."', "..", "middle"),
    ('a trailing dot "."', ".", "end"),
    ('a slash "/"', "/", "middle"),
    ('a percent sign "%"', "%", "middle"),
    ('a question mark "?"', "?", "middle"),
    ('a hash "#"', "#", "middle"),
    ('a plus "+"', "+", "middle"),
    ('an ampersand "&"', "&", "middle"),
    ('a semicolon ";"', ";", "middle"),
    ("a space", " ", "middle"),
    ("a line feed", "\n", "middle"),
    ("leading and trailing white space", " ", "around"),
    ('non-ASCII letters "éß"', "éß", "middle"),
    ('an emoji "🚗"', "🚗", "middle"),
)


def encoded(value: Any) -> str:
    """The path segment for `value`, with every reserved character percent-encoded, "." too."""
    return quote(str(value), safe="").replace(".", "%2E")


def item_url(session: Session, op: Operation, name: str, value: Any) -> str:
    return session.surface.url(op.path.replace(f"{{{name}}}", encoded(value)))


def run(ctx: Context, session: Session) -> None:
    for collection in ctx.spec.collections:
        ops = [collection.create, collection.list_op, *collection.item_ops.values()]
        writes = [collection.create, *collection.item_ops.values()]
        if not session.serves(*ops) or not ctx.selected(*writes) or not ctx.collection_is_mine(collection):
            continue
        prop = collection.request_schema["properties"][collection.identifier]
        if prop.get("type") == "integer":
            for value in INTEGER_BOUNDS:
                bound(ctx, session, collection, value, prop)
        else:
            for what, chars, where in SPECIAL:
                special(ctx, session, collection, what, identifier_with(ctx, prop, chars, where))


def identifier_with(ctx: Context, prop: dict[str, Any], chars: str, where: str) -> str:
    """A fresh identifier holding `chars` in the middle, at the end, or around it, within maxLength."""
    extra = 2 * len(chars) if where == "around" else len(chars)
    fresh = ctx.known.identities.string({**prop, "maxLength": prop.get("maxLength", 50) - extra})
    if where == "end":
        return fresh + chars
    if where == "around":
        return chars + fresh + chars
    return fresh[:1] + chars + fresh[1:]


def count(session: Session, collection: Collection) -> int | None:
    page = session.call(collection.list_op, query={"page_size": 1}).json()
    return page.get("count") if isinstance(page, dict) and isinstance(page.get("count"), int) else None


def special(ctx: Context, session: Session, collection: Collection, what: str, identifier: str) -> None:
    before = count(session, collection)
    created = session.call(collection.create, json=ctx.valid_body(collection, identifier))
    if not 200 <= created.status < 500:
        session.judge(CHECK, collection.create, created, f"an identifier with {what} answered {created.status}")
        return
    if created.status >= 400:
        refused(session, collection, what, identifier, before, created)
        return
    answered = created.json().get(collection.identifier) if isinstance(created.json(), dict) else None
    actual = answered if isinstance(answered, str) and answered else identifier
    note = "" if actual == identifier else f" (the service stored it as {actual!r})"
    addressable(ctx, session, collection, f"an identifier with {what}{note}", actual, created)


def refused(
    session: Session, collection: Collection, what: str, identifier: Any, before: int | None, created: Exchange
) -> None:
    """A refused create stored nothing. The count is unchanged and the item cannot be read."""
    get = collection.item_ops["get"]
    read = session.call(get, url=item_url(session, get, collection.identifier, identifier))
    after = count(session, collection)
    broken = None
    if read.status == 200:
        broken = f"the create of an identifier with {what} answered {created.status}, yet the item exists"
    elif after != before:
        broken = f"the create of an identifier with {what} answered {created.status}, yet count went {before} → {after}"
    session.judge(CHECK, collection.create, read if read.status == 200 else created, broken, [created])


def addressable(
    ctx: Context, session: Session, collection: Collection, what: str, identifier: Any, created: Exchange
) -> bool:
    """GET, PUT, PATCH and DELETE at the encoded path work on the created item. True when they all did."""
    name = collection.identifier
    ops = collection.item_ops
    body = {**ctx.valid_body(collection, identifier), name: identifier}
    changed = changed_body(ctx, collection, body)
    field = next(n for n in changed if n not in ctx.fixed_fields(collection))
    steps: list[tuple[Operation, dict[str, Any], tuple[int, ...]]] = [
        (ops["get"], {}, (200,)),
        (ops["put"], {"json": changed}, (200,)),
        (ops["patch"], {"json": {field: body[field]}}, (200,)),
        (ops["delete"], {}, (200, 202, 204)),
    ]
    done = [created]  # A violation's setup is the requests before it, so that its reproduction is whole.
    for op, content, statuses in steps:
        exchange = session.call(op, url=item_url(session, op, name, identifier), **content)
        item = exchange.json()
        wrong_item = op.method != "delete" and (not isinstance(item, dict) or item.get(name) != identifier)
        if exchange.status not in statuses or wrong_item:
            broken = f"created but unreachable: {what}; {op.method.upper()} at its path answered {exchange.status}"
            if exchange.status in statuses:
                broken = f"{what}: {op.method.upper()} at its path answered another item"
            session.judge(CHECK, op, exchange, broken, done)
            return False
        session.judge(CHECK, op, exchange, None)
        done.append(exchange)
    gone = session.call(ops["get"], url=item_url(session, ops["get"], name, identifier))
    still = None if gone.status == 404 else f"{what}: a read after DELETE answered {gone.status}, not 404"
    return session.judge(CHECK, ops["get"], gone, still, done)


def bound(ctx: Context, session: Session, collection: Collection, value: int, prop: dict[str, Any]) -> None:
    """A bound value in a path and in a create is served or refused with a 4xx, never a 5xx."""
    name, get = collection.identifier, collection.item_ops["get"]
    read = session.call(get, url=item_url(session, get, name, value))
    session.judge(CHECK, get, read, None if read.status < 500 else f"{name}={value} in the path answered {read.status}")
    if read.status == 200:
        return  # An item of the target's own is never written to.
    created = session.call(collection.create, json=ctx.valid_body(collection, value))
    if created.status >= 500 or created.status < 200:
        session.judge(CHECK, collection.create, created, f"a create with {name}={value} answered {created.status}")
    elif created.status < 300:
        addressable(ctx, session, collection, f"{name}={value}", value, created)
    else:
        session.judge(CHECK, collection.create, created, None)
