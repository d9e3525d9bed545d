"""`body_encodings`: JSON, urlencoded form and multipart bodies with the same fields create the same item.

Each collection gets three items from the contract's example, one per media type. Nulls are left out,
since a form has no null. Each item is read back and compared with the JSON one, identifier aside.

Then three more, each media type written in capitals (`APPLICATION/JSON`), which RFC 9110 makes the
same media type (`media-type-case`). Each must create the same item, or be refused with a 4xx and
store nothing. Connexion, for one, hands its handler the bytes of such a JSON body: a 500.
"""

from __future__ import annotations

from typing import Any

from contract_tests.judge.domain.data import Context, differences
from contract_tests.judge.domain.http import Exchange, Session
from contract_tests.judge.domain.media import MEDIA_TYPES, encoded, in_capitals
from contract_tests.spec import Collection

CHECK = "body_encodings"


def run(ctx: Context, session: Session) -> None:
    for collection in ctx.spec.collections:
        ops = (collection.create, collection.item_ops["get"], collection.item_ops["delete"])
        if session.serves(*ops) and ctx.selected(collection.create) and ctx.collection_is_mine(collection):
            compare(ctx, session, collection)


def compare(ctx: Context, session: Session, collection: Collection) -> None:
    reference: dict[str, Any] | None = None
    for media_type in MEDIA_TYPES:
        identifier = ctx.fresh_identifier(collection)
        body = ctx.valid_body(collection, identifier, nulls=False)
        params = {collection.identifier: identifier}
        created = session.call(collection.create, **encoded(body, media_type))
        if created.status != 201:
            session.judge(CHECK, collection.create, created, f"a {media_type} body answered {created.status}, not 201")
            continue
        read, item, wrong = read_back(session, collection, params, body, media_type, reference)
        reference = item if reference is None else reference
        broken = f"the item created from {media_type} differs: " + "; ".join(wrong) if wrong else None
        session.judge(CHECK, collection.create, read, broken)
        session.call(collection.item_ops["delete"], params)
    for media_type in MEDIA_TYPES:
        capitals(ctx, session, collection, media_type, reference)


def read_back(
    session: Session,
    collection: Collection,
    params: dict[str, Any],
    body: dict[str, Any],
    media_type: str,
    reference: dict[str, Any] | None,
) -> tuple[Exchange, dict[str, Any], list[str]]:
    """The item `params` names, read back; its fields but the identifier; and how it differs from `body`
    sent as `media_type`, and from `reference`, the JSON body's item (None: this one is it)."""
    read = session.call(collection.item_ops["get"], params)
    stored = read.json() if isinstance(read.json(), dict) else {}
    item = {name: value for name, value in stored.items() if name != collection.identifier}
    wrong = differences(body, stored, form=media_type != "application/json")
    return read, item, wrong or differences(item if reference is None else reference, item)


def capitals(
    ctx: Context, session: Session, collection: Collection, media_type: str, reference: dict[str, Any] | None
) -> None:
    """A body sent as `media_type` in capitals creates the item it does in lower case, or is refused and
    stores nothing. `reference` is the JSON body's item (None: there was none)."""
    identifier = ctx.fresh_identifier(collection)
    body = ctx.valid_body(collection, identifier, nulls=False)
    params = {collection.identifier: identifier}
    content, declared = in_capitals(body, media_type)
    headers = {**session.surface.headers, "Content-Type": declared}
    sent = session.call(collection.create, headers=headers, content=content)
    read, _, wrong = read_back(session, collection, params, body, media_type, reference)
    what = f"a body sent as {declared.partition(';')[0]}"
    if 400 <= sent.status < 500:
        broken = None if read.status == 404 else f"{what} was refused ({sent.status}), yet its item reads {read.status}"
    elif sent.status != 201:
        broken = f"{what} answered {sent.status}, not 201 or a 4xx refusal"
    else:
        broken = f"the item created from {what} differs: " + "; ".join(wrong) if wrong else None
    session.judge(CHECK, collection.create, read, broken, [sent])
    if read.status != 404:
        session.call(collection.item_ops["delete"], params)
