"""`patch_locality`: a PATCH changes what it sends and nothing else.

The test creates an item. Each writable field in turn (strings, integers, decimals) is patched alone,
in each body encoding the operation accepts. A nullable one is also set to null and back. The answer
and the next read hold the new value, and every other field's value unchanged.

Identifiers and references stay, since other checks cover them. An external reference changes only to
another value the target serves.

A form carries null as the empty value. What it reads back as is the spec's decision
`empty-form-value`. Its admitted values (null or "") each count where the field's schema allows them.

A nullable string is also set to the text `null`, which a form parser may take for null (Connexion's
did). Only the empty value is a form's null, and the text reads back as sent (decision `form-text`).
So a number field given the text `null` by form is refused with 400 and the item stays as it was: a
parser taking the text for null would store null in a nullable one.

Last, each field is sent twice in one form PATCH (a new value, then its own): one of the two is stored
(decision `repeated-field`), not both joined, a list, or a refusal. And in every encoding, a PATCH with
an unknown field beside a known one, then a read with an unknown query parameter: ignored, or the PATCH
refused with a 4xx that changed nothing (decision `unknown-fields-ignored`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from contract_tests.judge.domain.data import Context, differences
from contract_tests.judge.domain.http import Exchange, Session
from contract_tests.judge.domain.media import admitted, allows_text, encoded, media_types, repeated
from contract_tests.spec import JSON, Collection

CHECK = "patch_locality"
NULL_TEXT = "null"
NUMBER_TYPES = ("integer", "number")
UNKNOWN = "shop_contract_unknown"
"""A body field and a query parameter no operation of the spec has."""


def run(ctx: Context, session: Session) -> None:
    for collection in ctx.spec.collections:
        ops = [collection.create, *collection.item_ops.values()]
        patch = collection.item_ops["patch"]
        if session.serves(*ops) and ctx.selected(patch) and ctx.collection_is_mine(collection):
            for media in media_types(patch):
                if ctx.encoding_is_mine(media):
                    patch_each(ctx, session, collection, media)


def changes(ctx: Context, collection: Collection, state: JSON) -> Iterator[tuple[str, Any]]:
    """(field, value) for each PATCH in turn. Every writable field is changed. A nullable one is nulled,
    set to the text `null` where its schema allows it, and back."""
    props = collection.request_schema["properties"]
    fixed = ctx.fixed_fields(collection)
    for name, value in state.items():
        if name in fixed:
            continue
        changed = ctx.changed_value(collection, name, value)
        yield name, changed
        if props[name].get("nullable"):
            yield name, None
            if allows_text(props[name], NULL_TEXT):
                yield name, NULL_TEXT
            yield name, changed


def patch_each(ctx: Context, session: Session, collection: Collection, media: str) -> None:
    name, get, patch = collection.identifier, collection.item_ops["get"], collection.item_ops["patch"]
    identifier = ctx.fresh_identifier(collection)
    state = ctx.valid_body(collection, identifier)
    created = session.create_for(CHECK, patch, collection, state, "the item to patch")
    if created is None:
        return
    setup: list[Exchange] = [created]
    params = {name: identifier}
    for field, value in changes(ctx, collection, state):
        patched = session.call(patch, params, **encoded({field: value}, media))
        state = {**state, field: stored(patched, field, admitted(ctx, collection, field, value, media))}
        read = session.call(get, params)
        evidence, broken = patched, judged(patched, 200, state, f"a PATCH of `{field}` alone to {value!r} ({media})")
        if broken is None:
            evidence, broken = read, judged(read, 200, state, f"a read after a PATCH of `{field}` alone ({media})")
        if not session.judge(CHECK, patch, evidence, broken, setup):
            return  # The item stays, named in the violation.
        setup.append(patched)
    after = ignores_unknown_fields(ctx, session, collection, media, state, setup)
    if after is None:
        return
    state = after
    if media != "application/json":
        if not refuses_null_text(session, collection, media, state, setup):
            return
        if not takes_one_of_repeated(ctx, session, collection, media, state, setup):
            return
    session.call(collection.item_ops["delete"], params)


def ignores_unknown_fields(
    ctx: Context, session: Session, collection: Collection, media: str, state: JSON, setup: list[Exchange]
) -> JSON | None:
    """A PATCH of one field with an unknown field beside it, then a read with an unknown query parameter.
    The unknown ones are ignored (the change made, nothing else, no unknown field answered), or the PATCH
    is refused with a 4xx that changed nothing: the decision `unknown-fields-ignored` admits either.
    Returns what the item then holds; None once a violation is judged, and the item stays."""
    get, patch = collection.item_ops["get"], collection.item_ops["patch"]
    params = {collection.identifier: state[collection.identifier]}
    fixed = ctx.fixed_fields(collection)
    field = next((name for name, value in state.items() if name not in fixed and value is not None), None)
    if field is None:
        return state
    change = ctx.changed_value(collection, field, state[field])
    what = f"a PATCH of `{field}` with the unknown field `{UNKNOWN}` beside it ({media})"
    patched = session.call(patch, params, **encoded({field: change, UNKNOWN: "1"}, media))
    expected = state if 400 <= patched.status < 500 else {**state, field: change}
    broken = None if 400 <= patched.status < 500 else unknown_problem(patched, expected, what)
    evidence = patched
    if broken is None:
        evidence = session.call(get, params, query={UNKNOWN: "1"})
        broken = unknown_problem(
            evidence, expected, f"a read with the unknown query parameter `{UNKNOWN}` after {what}"
        )
    return expected if session.judge(CHECK, patch, evidence, broken, setup) else None


def unknown_problem(exchange: Exchange, expected: JSON, what: str) -> str | None:
    """What is wrong with an answer to a request carrying an unknown field: not `expected`, or the field answered."""
    broken = judged(exchange, 200, expected, what)
    if broken is None and UNKNOWN in (exchange.json() or {}):
        broken = f"{what} answered the unknown field back"
    return broken


def takes_one_of_repeated(
    ctx: Context, session: Session, collection: Collection, media: str, state: JSON, setup: list[Exchange]
) -> bool:
    """Each field the PATCHes changed, sent twice by form: a new value, then its value now. The answer and
    the next read hold one of the two, and every other field as it was. The decision `repeated-field`
    admits either value. False once a violation is judged, and the item stays."""
    get, patch = collection.item_ops["get"], collection.item_ops["patch"]
    params = {collection.identifier: state[collection.identifier]}
    fixed = ctx.fixed_fields(collection)
    for field, value in state.items():
        if field in fixed or value is None:
            continue
        sent = [ctx.changed_value(collection, field, value), value]
        what = f"a PATCH of `{field}` sent twice, {sent[0]!r} then {sent[1]!r} ({media})"
        patched = session.call(patch, params, **repeated(field, sent, media))
        answered = stored(patched, field, sent)
        evidence, broken = patched, judged(patched, 200, {**state, field: answered}, what)
        if broken is None:
            evidence = session.call(get, params)
            broken = judged(evidence, 200, {**state, field: answered}, f"a read after {what}")
        if not session.judge(CHECK, patch, evidence, broken, setup):
            return False
        state = {**state, field: answered}
    return True


def number_fields(collection: Collection) -> list[str]:
    """The body's number fields, the identifier left out (changing it is another decision's)."""
    props = collection.request_schema["properties"]
    return [name for name, prop in props.items() if prop.get("type") in NUMBER_TYPES and name != collection.identifier]


def refuses_null_text(session: Session, collection: Collection, media: str, state: JSON, setup: list[Exchange]) -> bool:
    """Each number field PATCHed by form to the text `null`: 400, and the item as it was (decision
    `form-text`). False once a violation is judged, and the item stays."""
    get, patch = collection.item_ops["get"], collection.item_ops["patch"]
    params = {collection.identifier: state[collection.identifier]}
    for field in number_fields(collection):
        what = f"a PATCH of the number `{field}` to the text {NULL_TEXT!r} ({media})"
        refused = session.call(patch, params, **encoded({field: NULL_TEXT}, media))
        evidence, broken = refused, None if refused.status == 400 else f"{what} answered {refused.status}, not 400"
        if broken is None:
            evidence = session.call(get, params)
            broken = judged(evidence, 200, state, f"a read after {what} was refused")
        if not session.judge(CHECK, patch, evidence, broken, setup):
            return False
    return True


def stored(patched: Exchange, field: str, choices: list[Any]) -> Any:
    """The admitted value the PATCH answered for `field`, and the rest of the check holds the target to it.
    When the answer holds none of them, it is the first one, and the answer is judged against it."""
    answer = patched.json()
    answered = answer.get(field) if isinstance(answer, dict) else None
    return answered if answered in choices else choices[0]


def judged(exchange: Exchange, status: int, expected: JSON, what: str) -> str | None:
    if exchange.status != status:
        return f"{what} answered {exchange.status}, not {status}"
    wrong = differences(expected, exchange.json())
    return f"{what}: " + "; ".join(wrong) if wrong else None
