"""`read_back_identical`: what is written reads back identical, from the item and every list showing it.

For each collection and each body encoding its create accepts, one item lives through three writes.
- A create sets every writable field at the low end of its range (`ranges`). That is the shortest
  strings, an emoji outside the BMP, the minima, and null where nullable.
- A PUT sets the high end, which is the longest strings in text beyond Latin-1 and the maxima.
- A PATCH sends half the fields back to the low end, so that the fields it leaves out hold values it
  could lose.

After each write, several answers must hold exactly what was sent. They are the write's answer, a read
of the item, and every list that must show it, on the page its documented order puts it. Those lists
are its collection's list and the sub-list of each item it names, such as the products of its product
line. What was sent is compared by the spec's types.
- Text is compared code point for code point, after the JSON decode.
- Decimals are compared by value.
- A null sent reads back as null. In a form, the empty value sent reads back as what the spec's
  decision `empty-form-value` admits.
- A field the PATCH did not send keeps its value.

A valid value refused is a violation too.

The item is then deleted (`deleted_everywhere`). A read of it must answer 404. Each page that showed
it, read again at the same URL, must no longer hold it, or be past the end now and answer 404. Each
sub-list it owned must answer 404 (the spec's `unknown-resource`), not an empty page. Those sub-lists
are the create operation's links to lists, such as a product line's products.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from contract_tests.judge.domain.data import Context, differences
from contract_tests.judge.domain.http import Exchange, Session
from contract_tests.judge.domain.media import admitted, encoded, media_types
from contract_tests.judge.domain.owners import dependant_collection
from contract_tests.judge.domain.placement import Placement, find, locate, results
from contract_tests.judge.domain.ranges import HIGH, LOW, end_value
from contract_tests.spec import JSON, Collection, Operation

CHECK = "read_back_identical"
DELETED = "deleted_everywhere"
JSON_MEDIA = "application/json"


@dataclass(frozen=True)
class Written:
    """A write to judge the reading back of: its operation, its answer, and how a message names it."""

    op: Operation
    exchange: Exchange
    what: str


@dataclass(frozen=True)
class Listing:
    """A list that must show the item: the operation and its path parameters."""

    op: Operation
    params: dict[str, Any]


def run(ctx: Context, session: Session) -> None:
    for collection in ctx.spec.collections:
        ops = [collection.create, collection.list_op, *collection.item_ops.values()]
        writes = [collection.create, collection.item_ops["put"], collection.item_ops["patch"]]
        if session.serves(*ops) and ctx.selected(*writes) and ctx.collection_is_mine(collection):
            for media in media_types(collection.create):
                follow(ctx, session, collection, media)


def ranged(ctx: Context, collection: Collection, body: JSON, side: str) -> JSON:
    """`body` with every field but the fixed ones (identifier, references) at the `side` end of its range.

    An external reference keeps a value the target serves (`external-references`)."""
    props = collection.request_schema["properties"]
    fixed = ctx.fixed_fields(collection) | set(ctx.spec.external_references(collection.request_schema))
    return {name: value if name in fixed else end_value(props[name], side, value) for name, value in body.items()}


def listings(ctx: Context, session: Session, collection: Collection, body: JSON) -> list[Listing]:
    """The lists that must show an item with `body`: its collection's, and each owner's sub-list of it."""
    found = [Listing(collection.list_op, {})]
    for name, owner in ctx.spec.references(collection.create).items():
        for sub_list in owner.sub_lists:
            if dependant_collection(ctx, owner, sub_list) is collection and session.serves(sub_list):
                found.append(Listing(sub_list, {owner.identifier: body[name]}))
    return found


def expected(ctx: Context, collection: Collection, sent: JSON, media: str, answer: Exchange) -> JSON:
    """What `sent` must read back as. That is itself, but a null sent in a form reads as the admitted value
    it answered."""
    body = answer.json() if isinstance(answer.json(), dict) else {}
    result = {}
    for name, value in sent.items():
        choices = admitted(ctx, collection, name, value, media)
        result[name] = body.get(name) if body.get(name) in choices else choices[0]
    return result


def follow(ctx: Context, session: Session, collection: Collection, media: str) -> None:
    name = collection.identifier
    identifier = ctx.fresh_identifier(collection)
    params = {name: identifier}
    low = ranged(ctx, collection, ctx.valid_body(collection, identifier), LOW)
    high = ranged(ctx, collection, low, HIGH)
    changed = [field for field in low if field not in ctx.fixed_fields(collection)]
    half = {field: low[field] for field in changed[::2]}
    put, patch = collection.item_ops["put"], collection.item_ops["patch"]
    steps = [(collection.create, {}, low, 201), (put, params, high, 200), (patch, params, half, 200)]
    setup: list[Exchange] = []
    state: JSON = {}
    shown: list[Placement] = []
    for op, path_params, sent, status in steps:
        via = media if media in media_types(op) else JSON_MEDIA
        written = session.call(op, path_params, **encoded(sent, via))
        what = f"{op.method.upper()} of {'the fields ' + ', '.join(sent) if op is patch else 'every field'} ({via})"
        if written.status != status:
            session.judge(CHECK, op, written, f"a valid {what} answered {written.status}, not {status}", setup)
            return  # The item stays, named in the violation.
        state = {**state, **expected(ctx, collection, sent, via, written)}
        setup.append(written)
        found = read_back(ctx, session, collection, Written(op, written, what), state, setup)
        if found is None:
            return
        shown = found
    delete(session, collection, identifier, shown, setup)


def read_back(
    ctx: Context, session: Session, collection: Collection, written: Written, state: JSON, setup: list[Exchange]
) -> list[Placement] | None:
    """Judge that the write's answer, the item and every list showing it hold `state`.

    Returns the pages showing it, or None when one does not, which is reported."""
    name, get, what = collection.identifier, collection.item_ops["get"], written.what
    wrong = differences(state, written.exchange.json())
    if not session.judge(
        CHECK, written.op, written.exchange, f"the answer to a {what}: " + "; ".join(wrong) if wrong else None, setup
    ):
        return None
    read = session.call(get, {name: state[name]})
    wrong = [f"answered {read.status}"] if read.status != 200 else differences(state, read.json())
    if not session.judge(CHECK, get, read, f"a read after a {what}: " + "; ".join(wrong) if wrong else None, setup):
        return None
    shown = []
    for listing in listings(ctx, session, collection, state):
        placed = locate(ctx.spec, session, listing.op, listing.params, name, state[name])
        where = f"{listing.op.id} after a {what}"
        if placed.item is None:
            missing = f"{where}: {name}={state[name]!r} is not on the page its order puts it on"
            session.judge(CHECK, listing.op, placed.exchange, missing, setup)
            return None
        wrong = differences(state, placed.item)
        broken: str | None = f"{where}: " + "; ".join(wrong) if wrong else None
        if not session.judge(CHECK, listing.op, placed.exchange, broken, setup):
            return None
        shown.append(placed)
    return shown


def delete(
    session: Session, collection: Collection, identifier: Any, shown: list[Placement], setup: list[Exchange]
) -> None:
    name = collection.identifier
    params = {name: identifier}
    deleted = session.call(collection.item_ops["delete"], params)
    if not session.judge(DELETED, collection.item_ops["delete"], deleted, refused(deleted), setup):
        return
    after = [*setup, deleted]
    read = session.call(collection.item_ops["get"], params)
    broken = None if read.status == 404 else f"a read of the deleted {name}={identifier!r} answered {read.status}"
    session.judge(DELETED, collection.item_ops["get"], read, broken, after)
    for placed in shown:
        again = session.call(placed.op, url=str(placed.exchange.request.url))
        still = find(results(again) or [], name, identifier) if again.status != 404 else None
        broken = None if still is None else f"the deleted {name}={identifier!r} is still listed"
        if again.status not in (200, 404):
            broken = f"the page that showed the deleted {name}={identifier!r} answered {again.status}"
        session.judge(DELETED, placed.op, again, broken, after)
    for sub_list in collection.sub_lists:
        if session.serves(sub_list):
            owned = session.call(sub_list, params)
            broken = f"{sub_list.id} of the deleted {name}={identifier!r} answered {owned.status}, not 404"
            session.judge(DELETED, sub_list, owned, None if owned.status == 404 else broken, after)


def refused(deleted: Exchange) -> str | None:
    return None if deleted.status in (200, 202, 204) else f"the DELETE answered {deleted.status}"
