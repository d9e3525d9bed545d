"""`identifier_immutable`: a PUT or PATCH cannot change the identifier of the item in its path.

For every collection, PUT and PATCH in each body encoding the operation accepts carry a different
identifier than the path. The contract answers 409. A 400 is accepted by default, and the strict
`identifier_change_is_conflict` requires 409. Nothing changes either: the old item reads back as it
was and the new identifier does not exist.

When the service accepts, the report says what it did. The item was copied (both exist), moved (only
the new one exists), changed in place, or kept while the new identifier answers something else than 404.
"""

from __future__ import annotations

from contract_tests.judge.domain.data import Context, differences
from contract_tests.judge.domain.http import Exchange, Session
from contract_tests.judge.domain.media import encoded, media_types
from contract_tests.spec import Collection, Operation

CHECK = "identifier_immutable"
STRICT = "identifier_change_is_conflict"


def run(ctx: Context, session: Session) -> None:
    for collection in ctx.spec.collections:
        ops = [collection.create, *collection.item_ops.values()]
        if not session.serves(*ops) or not ctx.collection_is_mine(collection):
            continue
        for method in ("put", "patch"):
            op = collection.item_ops[method]
            if ctx.selected(op):
                for media in media_types(op):
                    rename(ctx, session, collection, op, media)


def rename(ctx: Context, session: Session, collection: Collection, op: Operation, media: str) -> None:
    name, get, delete = collection.identifier, collection.item_ops["get"], collection.item_ops["delete"]
    old, new = ctx.fresh_identifier(collection), ctx.fresh_identifier(collection)
    original = ctx.valid_body(collection, old)
    created = session.create_for(CHECK, op, collection, original, "the item to rename")
    if created is None:
        return
    body = ctx.valid_body(collection, new) if op.method == "put" else {name: new}
    renamed = session.call(op, {name: old}, **encoded(body, media))
    old_read, new_read = session.call(get, {name: old}), session.call(get, {name: new})
    old_kept = old_read.status == 200 and not differences(original, old_read.json())
    new_absent = new_read.status == 404
    what = f"a {op.method.upper()} with {name}={new!r} in its body ({media}) answered {renamed.status}"
    broken = None
    if not (old_kept and new_absent):
        broken = f"{what}: {outcome(old_read, new_read, old_kept)}"
    elif renamed.status not in (400, 409):
        broken = f"{what}, not 409"
    if session.judge(CHECK, op, renamed, broken, [created]):
        if STRICT in ctx.strict:
            session.judge(STRICT, op, renamed, None if renamed.status == 409 else f"{what}, not 409", [created])
        session.call(delete, {name: old})


def outcome(old_read: Exchange, new_read: Exchange, old_kept: bool) -> str:
    """What the accepted rename did, in words."""
    if old_read.status == 200 and new_read.status == 200:
        return "the item was copied (the old and the new identifier both exist)"
    if new_read.status == 200:
        return "the item was moved (only the new identifier exists)"
    if old_kept:
        return f"the item is kept, but reading the new identifier answers {new_read.status}, not 404"
    if old_read.status == 200:
        return "the item was changed in place (its other fields changed)"
    return f"the item is gone (the old identifier answers {old_read.status}, the new {new_read.status})"
