"""`invalid_values_rejected`: one clearly invalid value per rule of a request schema is answered 4xx.

This replaces Schemathesis' `negative_data_rejection` by default. That check also flags the coercions
a correct DRF backend makes, such as 12 stored as "12" and "12" read as 12. Every value here is
invalid under any reading.
- A string one over maxLength, in ASCII and in text beyond Latin-1.
- An empty string where minLength is 1.
- An integer past its minimum or maximum.
- A missing required field.
- Null in a non-nullable field.
- A decimal with a letter, without a digit, or with three fraction digits. The one without a digit is
  `-`, which the documented pattern matches.

Writes go to items the test creates and removes. Each write operation's cases are a chain of their
own, on an item of its own, so that a run with several workers sends the chains side by side
(`Context.writes`, run/scheduling.py `per_write`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from contract_tests.judge.domain.data import Context
from contract_tests.judge.domain.http import Session
from contract_tests.judge.domain.ranges import one_past
from contract_tests.spec import JSON, Collection, Operation

CHECK = "invalid_values_rejected"
OMITTED = object()


def invalid_values(prop: JSON) -> Iterator[tuple[str, Any]]:
    """(what is wrong, the value) for each rule of one property."""
    if "maxLength" in prop:
        yield f"longer than maxLength {prop['maxLength']}", "a" * (prop["maxLength"] + 1)
        yield f"longer than maxLength {prop['maxLength']} in text beyond Latin-1", one_past(prop)
    if prop.get("minLength", 0) >= 1:
        yield "empty, minLength is 1", ""
    if "maximum" in prop:
        yield f"above maximum {prop['maximum']}", prop["maximum"] + 1
    if "minimum" in prop:
        yield f"below minimum {prop['minimum']}", prop["minimum"] - 1
    if not prop.get("nullable", False):
        yield "null, not nullable", None
    if prop.get("format") == "decimal":
        yield "a decimal with a letter", "12a.00"
        yield "a decimal without a digit (`format: decimal` requires one)", "-"
        yield "a decimal with three fraction digits", "1.234"


def cases(schema: JSON, partial: bool) -> Iterator[tuple[str, str, Any]]:
    """(field, what is wrong, value or OMITTED) for every rule of `schema`."""
    for name, prop in schema["properties"].items():
        for problem, value in invalid_values(prop):
            yield name, problem, value
        if not partial and name in schema.get("required", []):
            yield name, "missing, it is required", OMITTED


def run(ctx: Context, session: Session) -> None:
    for collection in ctx.spec.collections:
        writes = [collection.create, collection.item_ops["put"], collection.item_ops["patch"]]
        needed = [*writes, collection.item_ops["delete"]]
        if not session.serves(*needed) or not ctx.collection_is_mine(collection):
            continue
        for op in writes:
            if ctx.selected(op) and ctx.write_is_mine(op):
                write_chain(ctx, session, collection, op)


def write_chain(ctx: Context, session: Session, collection: Collection, op: Operation) -> None:
    """One write operation's cases (`reject_all`), a replace's and an update's on an item made for them
    and removed after."""
    if op.method == "post":
        reject_all(ctx, session, collection, op, None)
        return
    existing = ctx.fresh_identifier(collection)
    session.call(collection.create, json=ctx.valid_body(collection, existing))
    reject_all(ctx, session, collection, op, existing)
    session.call(collection.item_ops["delete"], {collection.identifier: existing})


def reject_all(ctx: Context, session: Session, collection: Collection, op: Operation, existing: Any) -> None:
    schema = op.request_schema
    assert schema is not None
    partial = "required" not in schema
    for name, problem, value in cases(schema, partial):
        identifier = existing if op.method != "post" else ctx.fresh_identifier(collection)
        body = {} if partial else ctx.valid_body(collection, identifier)
        if value is OMITTED:
            body.pop(name)
        else:
            body[name] = value
        params = {} if op.method == "post" else {collection.identifier: existing}
        exchange = session.call(op, params, json=body)
        shown = "" if value is OMITTED else f" ({repr(value)[:40]})"
        broken = f"`{name}` {problem}{shown}: answered {exchange.status}, not 4xx"
        session.judge(CHECK, op, exchange, None if 400 <= exchange.status < 500 else broken)
        if 200 <= exchange.status < 300 and op.method == "post" and isinstance(exchange.json(), dict):
            session.call(
                collection.item_ops["delete"], {collection.identifier: exchange.json().get(collection.identifier)}
            )
