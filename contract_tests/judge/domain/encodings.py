"""`body_encodings`: JSON, urlencoded form and multipart bodies with the same fields create the same item.

Each collection gets three items from the contract's example, one per media type. Nulls are left out,
since a form has no null. Each item is read back and compared with the JSON one, identifier aside.
"""

from __future__ import annotations

from typing import Any

from contract_tests.judge.domain.data import Context, differences
from contract_tests.judge.domain.http import Session
from contract_tests.judge.domain.media import MEDIA_TYPES, encoded
from contract_tests.spec import Collection

CHECK = "body_encodings"


def run(ctx: Context, session: Session) -> None:
    for collection in ctx.spec.collections:
        ops = (collection.create, collection.item_ops["get"], collection.item_ops["delete"])
        if session.serves(*ops) and ctx.selected(collection.create) and ctx.collection_is_mine(collection):
            compare(ctx, session, collection)


def compare(ctx: Context, session: Session, collection: Collection) -> None:
    get, delete = collection.item_ops["get"], collection.item_ops["delete"]
    reference: dict[str, Any] | None = None
    for media_type in MEDIA_TYPES:
        identifier = ctx.fresh_identifier(collection)
        body = ctx.valid_body(collection, identifier, nulls=False)
        params = {collection.identifier: identifier}
        created = session.call(collection.create, **encoded(body, media_type))
        if created.status != 201:
            session.judge(CHECK, collection.create, created, f"a {media_type} body answered {created.status}, not 201")
            continue
        read = session.call(get, params)
        stored = read.json() if isinstance(read.json(), dict) else {}
        representation = {name: value for name, value in stored.items() if name != collection.identifier}
        if reference is None:
            reference = representation
        wrong = differences(body, stored, form=media_type != "application/json") or differences(
            reference, representation
        )
        broken = f"the item created from {media_type} differs: " + "; ".join(wrong) if wrong else None
        session.judge(CHECK, collection.create, read, broken)
        session.call(delete, params)
