"""Near misses of an integer identifier, for `identifier_variants`: other spellings of its number.

An integer identifier in a path is read as a number (decision `integer-identifiers`). Another spelling of
the same number is a leading zero, a plus sign, a space before or after, an underscore between digits,
its digits in full width, or a decimal point and a zero. Python's `int()` reads the first five as the
number, and so does Django REST Framework; the mock reads a zero and a sign only. Each spelling either
names the item or is another identifier, which does not exist. So a read answers the item as stored,
under its own number, or 404. A replace with the item's own body, a patch of a field to its own value
and a delete then answer alike: found (2xx) where the read found it, 404 where it did not. A mix, a 5xx,
another status or another item is the violation. An item a spelling deleted is made again for the next.

One digit more and one digit less are other numbers, which a lookup by prefix confuses with it. Where no
item has one, each of the four operations answers 404 at it (a replace whose body's number is past the
schema's bounds may be 400), and the item reads unchanged after.
"""

from __future__ import annotations

from contract_tests.judge.domain.data import Context, differences
from contract_tests.judge.domain.http import Exchange, Session
from contract_tests.spec import JSON, Collection, Operation

CHECK = "identifier_variants"
FULL_WIDTH = {ord("0") + digit: 0xFF10 + digit for digit in range(10)}
"""Each ASCII digit to its full-width form, U+FF10 to U+FF19."""


def spellings(number: int) -> list[tuple[str, str]]:
    """(what, text) of `number` spelled otherwise."""
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
    return others


def try_spellings(ctx: Context, session: Session, collection: Collection, number: int) -> None:
    """Make an item numbered `number`, try every other spelling of it, then delete it."""
    name, delete = collection.identifier, collection.item_ops["delete"]
    body = ctx.valid_body(collection, number)
    created = session.create_for(CHECK, collection.create, collection, body, "the item to spell the number of")
    if created is None:
        return
    for what, text in spellings(number):
        if not alike(ctx, session, collection, body, (what, ctx.known.identities.derived(text)), [created]):
            return  # The item stays, named in the violation.
    if not other_numbers_apart(ctx, session, collection, body, [created]):
        return
    session.call(delete, {name: number})


def other_numbers_apart(
    ctx: Context, session: Session, collection: Collection, body: JSON, setup: list[Exchange]
) -> bool:
    """One digit more and one digit less are other numbers (a lookup by prefix confuses them): where no
    item has one, its read, replace, patch and delete answer 404, and the item reads unchanged. False once
    a violation is judged."""
    name, ops = collection.identifier, collection.item_ops
    digits = str(body[name])
    others = [("one digit more", int(digits + digits[-1]))]
    if len(digits.lstrip("-")) > 1:
        others.append(("one digit less", int(digits[:-1])))
    for what, number in others:
        other = ctx.known.identities.derived(number)
        read = session.call(ops["get"], {name: other})
        answered = read.json() if read.status == 200 else None
        if isinstance(answered, dict) and answered.get(name) == other:
            reason = f"{name}={other} ({what} than {digits}) is an item of the target: not a near miss here"
            session.ledger.skipped(session.surface.name, ops["get"].id, CHECK, reason)
            continue
        changed = {**body, name: other}
        field = next(field for field in body if field not in ctx.fixed_fields(collection))
        answers = [
            (ops["get"], read),
            (ops["put"], session.call(ops["put"], {name: other}, json=changed)),
            (ops["patch"], session.call(ops["patch"], {name: other}, json={field: body[field]})),
            (ops["delete"], session.call(ops["delete"], {name: other})),
        ]
        prop = collection.request_schema["properties"][name]
        within = prop.get("minimum", other) <= other <= prop.get("maximum", other)
        for op, answer in answers:
            # A replace whose body's number is past the schema's bounds may be refused as invalid first.
            allowed = (404,) if within or op is not ops["put"] else (404, 400)
            broken = None
            if answer.status not in allowed:
                broken = f"{name}={other} ({what} than {digits}: no such item) answered {answer.status}, not 404"
            if not session.judge(CHECK, op, answer, broken, setup):
                return False
    still = session.call(ops["get"], {name: body[name]})
    wrong = [f"answered {still.status}"] if still.status != 200 else differences(body, still.json())
    broken = f"{name}={digits} after its other numbers were sent: " + "; ".join(wrong) if wrong else None
    return session.judge(CHECK, ops["get"], still, broken, setup)


def alike(
    ctx: Context, session: Session, collection: Collection, body: JSON, spelling: tuple[str, str], setup: list[Exchange]
) -> bool:
    """The read, replace, patch and delete of one spelling answer alike: all found, or all 404. False once a
    violation is judged. Where the delete removed the item, it is made again."""
    name, ops = collection.identifier, collection.item_ops
    what, text = spelling
    spelled = {name: text}
    label = f"{name}={body[name]!r} spelled with {what} ({text!r})"
    read = session.call(ops["get"], spelled)
    found = read.status == 200
    broken = None if found or read.status == 404 else f"a read of {label} answered {read.status}, not 200 or 404"
    if broken is None and found and differences(body, read.json()):
        broken = f"a read of {label} answered another item, or under another number: " + "; ".join(
            differences(body, read.json())
        )
    if not session.judge(CHECK, ops["get"], read, broken, setup):
        return False
    field = next(field for field in body if field not in ctx.fixed_fields(collection))
    writes: list[tuple[Operation, JSON | None]] = [
        (ops["put"], body),
        (ops["patch"], {field: body[field]}),
        (ops["delete"], None),
    ]
    for op, sent in writes:
        answer = session.call(op, spelled, json=sent) if sent is not None else session.call(op, spelled)
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
    what = f"the item a DELETE of {label} removed, made again,"
    return session.create_for(CHECK, collection.create, collection, body, what) is not None
