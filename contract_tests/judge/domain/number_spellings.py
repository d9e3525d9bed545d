"""Near misses of an integer identifier, for `identifier_variants`: other spellings of its number.

An integer identifier in a path is read as a number (decision `integer-identifiers`). Another spelling of
the same number is a leading zero, a plus sign, a space before or after, an underscore between digits,
its digits in full width, or a decimal point and a zero. Python's `int()` reads the first five as the
number, and so does Django REST Framework; the mock reads a zero and a sign only. Each spelling either
names the item or is another identifier, which does not exist. So a read answers the item as stored,
under its own number, or 404. A replace with the item's own body, a patch of a field to its own value
and a delete then answer alike: found (2xx) where the read found it, 404 where it did not. A mix, a 5xx,
another status or another item is the violation. An item a spelling deleted is made again for the next.
"""

from __future__ import annotations

from urllib.parse import quote

from contract_tests.judge.domain.data import Context, differences
from contract_tests.judge.domain.http import Exchange, Session
from contract_tests.spec import JSON, Collection

CHECK = "identifier_variants"
FULL_WIDTH = {ord("0") + digit: 0xFF10 + digit for digit in range(10)}
"""Each ASCII digit to its full-width form, U+FF10 to U+FF19."""


def spellings(number: int) -> list[tuple[str, str]]:
    """(what, path segment) of `number` spelled otherwise, each percent-encoded."""
    digits = str(number)
    others = [
        ("a leading zero", f"0{digits}"),
        ("a plus sign", f"+{digits}"),
        ("a leading space", f" {digits}"),
        ("a trailing space", f"{digits} "),
        ("its digits in full width", digits.translate(FULL_WIDTH)),
        ("a decimal point and a zero", f"{digits}.0"),
    ]
    if len(digits.lstrip("-")) > 1:
        others.append(("an underscore between digits", f"{digits[:-1]}_{digits[-1]}"))
    return [(what, quote(other, safe="")) for what, other in others]


def try_spellings(ctx: Context, session: Session, collection: Collection, number: int) -> None:
    """Make an item numbered `number`, try every other spelling of it, then delete it."""
    name, delete = collection.identifier, collection.item_ops["delete"]
    body = ctx.valid_body(collection, number)
    created = session.call(collection.create, json=body)
    if created.status != 201:
        reason = f"the item to spell the number of could not be created (HTTP {created.status})"
        session.ledger.skipped(session.surface.name, collection.create.id, CHECK, reason)
        return
    for what, segment in spellings(number):
        if not alike(ctx, session, collection, body, (what, segment), [created]):
            return  # The item stays, named in the violation.
    session.call(delete, {name: number})


def alike(
    ctx: Context, session: Session, collection: Collection, body: JSON, spelling: tuple[str, str], setup: list[Exchange]
) -> bool:
    """The read, replace, patch and delete of one spelling answer alike: all found, or all 404. False once a
    violation is judged. Where the delete removed the item, it is made again."""
    name, ops = collection.identifier, collection.item_ops
    what, segment = spelling
    url = session.surface.url(ops["get"].path.replace(f"{{{name}}}", segment))
    label = f"{name}={body[name]!r} spelled with {what} ({segment})"
    read = session.call(ops["get"], url=url)
    found = read.status == 200
    broken = None if found or read.status == 404 else f"a read of {label} answered {read.status}, not 200 or 404"
    if broken is None and found and differences(body, read.json()):
        broken = f"a read of {label} answered another item, or under another number: " + "; ".join(
            differences(body, read.json())
        )
    if not session.judge(CHECK, ops["get"], read, broken, setup):
        return False
    field = next(field for field in body if field not in ctx.fixed_fields(collection))
    writes = [(ops["put"], {"json": body}), (ops["patch"], {"json": {field: body[field]}}), (ops["delete"], {})]
    for op, content in writes:
        answer = session.call(op, url=url, **content)
        agrees = 200 <= answer.status < 300 if found else answer.status == 404
        expected = "found, as its read was" if found else "404, as its read was"
        broken = None if agrees else f"a {op.method.upper()} of {label} answered {answer.status}, not {expected}"
        if broken is None and found and op.method != "delete" and differences(body, answer.json()):
            broken = f"a {op.method.upper()} of {label} answered: " + "; ".join(differences(body, answer.json()))
        if not session.judge(CHECK, op, answer, broken, [*setup, read]):
            return False
    if not found:
        return True
    gone = session.call(ops["get"], {name: body[name]})
    broken = (
        None if gone.status == 404 else f"after the DELETE of {label}, {name}={body[name]!r} answered {gone.status}"
    )
    if not session.judge(CHECK, ops["get"], gone, broken, [*setup, read]):
        return False
    again = session.call(collection.create, json=body)
    if again.status != 201:
        reason = f"the item a DELETE of {label} removed could not be made again (HTTP {again.status})"
        session.ledger.skipped(session.surface.name, collection.create.id, CHECK, reason)
    return again.status == 201
