"""`request_shapes`: a request of the wrong shape is refused, never served, and changes nothing.

Schemathesis generates requests well-formed in their media type, with a `Content-Type` and path values
of their type. So a service that reads whatever it gets is not caught by them. This check sends, on
each collection, what a careless parser takes for valid data.

- It sends a malformed JSON body to the create, the replace and the patch. The body is a valid one cut
  before its last brace, a list, or a string. It must be refused with a 4xx
  (`validation-failure/malformed-body`), and the item must read back as it was. A create stores
  nothing.
- It sends a valid JSON body to the create, declared as a media type the operation does not accept, or
  with no `Content-Type` at all. The answer must be 415 (`unsupported-media-type/refused`,
  `missing-content-type/refused`), and nothing is stored.
- It gives a path parameter the spec types as an integer as a word or a fraction, on each item
  operation and sub-list. The answer must be 404 (`unknown-resource/not-of-its-type`).

The media types and the parameter types are the spec's. The bodies are the contract's examples.
"""

from __future__ import annotations

import json
from typing import Any

from contract_tests.judge.domain.data import Context, changed_body
from contract_tests.judge.domain.http import Exchange, Session
from contract_tests.spec import Collection, Operation

CHECK = "request_shapes"
NOT_OBJECTS = (b"[]", b'"x"')
"""Well-formed JSON that is no object, so no request body of the contract."""
NOT_INTEGERS = ("abc", "1.5")
OTHER_MEDIA_TYPES = ("text/plain", "application/xml")
"""Media types a body may be declared as that no operation of the contract accepts."""
UNSUPPORTED = 415


def run(ctx: Context, session: Session) -> None:
    for collection in ctx.spec.collections:
        not_of_its_type(ctx, session, collection)
        get, delete = collection.item_ops["get"], collection.item_ops["delete"]
        if not ctx.collection_is_mine(collection) or not session.serves(collection.create, get, delete):
            continue
        if ctx.selected(collection.create):
            malformed_create(ctx, session, collection)
            undeclared_media(ctx, session, collection)
        for method in ("put", "patch"):
            op = collection.item_ops.get(method)
            if op is not None and session.serves(op) and ctx.selected(op):
                malformed_write(ctx, session, collection, op)


def as_json(session: Session) -> dict[str, str]:
    """The surface's headers with a JSON `Content-Type` (`headers` replace them in `Session.call`)."""
    return {**session.surface.headers, "Content-Type": "application/json"}


def malformed_bodies(body: dict[str, Any]) -> list[bytes]:
    """`body` cut before its closing brace, then well-formed JSON that is no object."""
    return [json.dumps(body).encode()[:-1], *NOT_OBJECTS]


def refused(exchange: Exchange, what: str) -> str | None:
    """None for a 4xx, which the decision admits. Otherwise what the answer was."""
    return None if 400 <= exchange.status < 500 else f"{what} answered {exchange.status}, not a 4xx refusal"


def malformed_create(ctx: Context, session: Session, collection: Collection) -> None:
    """Each malformed body refused by the create, and the item the cut one names not stored."""
    identifier = ctx.fresh_identifier(collection)
    params = {collection.identifier: identifier}
    for body in malformed_bodies(ctx.valid_body(collection, identifier)):
        sent = session.call(collection.create, headers=as_json(session), content=body)
        if not session.judge(CHECK, collection.create, sent, refused(sent, f"the malformed JSON body {body[-20:]!r}")):
            continue
        stored_nothing(session, collection, params, sent, "a malformed body")


def stored_nothing(session: Session, collection: Collection, params: dict[str, Any], sent: Exchange, what: str) -> None:
    """The item `params` names reads 404 after the refused create `sent`. One stored is deleted again."""
    read = session.call(collection.item_ops["get"], params)
    broken = None
    if read.status != 404:
        broken = f"{collection.identifier}={params[collection.identifier]!r} reads {read.status} after {what}, not 404"
        session.call(collection.item_ops["delete"], params)
    session.judge(CHECK, collection.create, read, broken, [sent])


def malformed_write(ctx: Context, session: Session, collection: Collection, op: Operation) -> None:
    """Each malformed body refused by the replace or patch `op`, and the item read back unchanged."""
    identifier = ctx.fresh_identifier(collection)
    params = {collection.identifier: identifier}
    body = ctx.valid_body(collection, identifier)
    created = session.create_for(CHECK, op, collection, body, f"the item to {op.method}")
    if created is None:
        return
    before = session.call(collection.item_ops["get"], params)
    changed = changed_body(ctx, collection, body)
    if op.method == "patch":
        changed = {name: value for name, value in changed.items() if value != body[name]} or changed
    for sent_body in malformed_bodies(changed):
        sent = session.call(op, params, headers=as_json(session), content=sent_body)
        session.judge(CHECK, op, sent, refused(sent, f"the malformed JSON body {sent_body[-20:]!r}"), [created])
        after = session.call(collection.item_ops["get"], params)
        broken = None
        if (after.status, after.json()) != (before.status, before.json()):
            broken = f"the item reads otherwise after a malformed {op.method.upper()} body ({after.status})"
        session.judge(CHECK, op, after, broken, [created, sent])
    session.call(collection.item_ops["delete"], params)


def undeclared_media(ctx: Context, session: Session, collection: Collection) -> None:
    """A valid JSON body as each media type the create does not accept, and with none, answers 415.

    Nothing is stored."""
    accepted = collection.create.definition.get("requestBody", {}).get("content", {})
    declared: list[str | None] = [media for media in OTHER_MEDIA_TYPES if media not in accepted]
    for media in [*declared, None]:
        identifier = ctx.fresh_identifier(collection)
        body = json.dumps(ctx.valid_body(collection, identifier)).encode()
        headers = None if media is None else {**session.surface.headers, "Content-Type": media}
        sent = session.call(collection.create, headers=headers, content=body)
        what = "a JSON body without a Content-Type" if media is None else f"a JSON body sent as {media}"
        broken = None if sent.status == UNSUPPORTED else f"{what} answered {sent.status}, not {UNSUPPORTED}"
        if session.judge(CHECK, collection.create, sent, broken) or 400 <= sent.status < 500:
            stored_nothing(session, collection, {collection.identifier: identifier}, sent, what)
        else:
            session.call(collection.item_ops["delete"], {collection.identifier: identifier})


def integer_parameters(op: Operation) -> list[str]:
    """The path parameters of `op` the spec types as integers."""
    params = [*op.path_item.get("parameters", []), *op.definition.get("parameters", [])]
    return [p["name"] for p in params if p["in"] == "path" and p.get("schema", {}).get("type") == "integer"]


def not_of_its_type(ctx: Context, session: Session, collection: Collection) -> None:
    """Each item operation and sub-list at an integer path parameter given as a word or a fraction answers 404.

    It goes one operation at a time, so it follows the shard's operations, not its collections."""
    body = ctx.valid_body(collection, ctx.missing_identifier(collection))
    fixed = ctx.fixed_fields(collection)
    contents: dict[str, dict[str, Any]] = {
        "put": {"json": body},
        "patch": {"json": dict([next((k, v) for k, v in body.items() if k not in fixed)])},
    }
    for op in [*collection.item_ops.values(), *collection.sub_lists]:
        names = integer_parameters(op)
        if not names or not session.serves(op) or not ctx.selected(op) or not ctx.operation_is_mine(op):
            continue
        for value in NOT_INTEGERS:
            sent = session.call(op, dict.fromkeys(names, value), **contents.get(op.method, {}))
            broken = None
            if sent.status != 404:
                broken = f"{op.id} with {names[0]}={value!r} (not an integer) answered {sent.status}, not 404"
            session.judge(CHECK, op, sent, broken)
