"""`identifier_variants`: the forms of an identifier the spec calls the same item, and those it calls
different items, are tried both ways (`identifiers-exact`).

For each collection with a string identifier, an item is created whose identifier mixes letter cases
and holds a non-ASCII letter in its composed form (`STEM`). The same item: its path with the
percent-escapes' hex digits in lower case, and with an ASCII letter percent-encoded, reads it. Other
items: the identifier with every letter's case swapped, and in its decomposed Unicode form (NFD),
read 404 while only the first exists; each is then created (201: not a duplicate), reads back as
itself with its own fields, and the first item is unchanged. Everything made is deleted; the first
item still reads after the others are gone. A create refused with a 4xx is admitted
(`identifiers-in-paths`) and listed as not exercised.
"""

from __future__ import annotations

import re
import unicodedata
from urllib.parse import quote

from contract_tests.judge.domain.data import Context, changed_body, differences
from contract_tests.judge.domain.http import Exchange, Session
from contract_tests.spec import JSON, Collection

CHECK = "identifier_variants"
STEM = "Éa"
"""A capital letter outside ASCII (composed: U+00C9) and a lower-case ASCII one."""


def run(ctx: Context, session: Session) -> None:
    for collection in ctx.spec.collections:
        ops = [collection.create, *collection.item_ops.values()]
        prop = collection.request_schema["properties"][collection.identifier]
        if (
            prop.get("type") == "string"
            and session.serves(*ops)
            and ctx.selected(collection.create, collection.item_ops["get"])
            and ctx.collection_is_mine(collection)
        ):
            try_variants(ctx, session, collection, ctx.known.identities.string(prop, STEM))


def path(session: Session, collection: Collection, segment: str) -> str:
    get = collection.item_ops["get"]
    return session.surface.url(get.path.replace(f"{{{collection.identifier}}}", segment))


def same_item_paths(identifier: str) -> list[tuple[str, str]]:
    """(what, path segment) naming `identifier` in another spelling of its percent-encoding."""
    encoded = quote(identifier, safe="")
    lower_hex = re.sub(r"%[0-9A-F]{2}", lambda escape: escape.group().lower(), encoded)
    letter = next((char for char in identifier if char.isascii() and char.isalpha()), None)
    spelled = [("percent-escapes in lower-case hex", lower_hex)]
    if letter is not None:
        spelled.append((f"the letter {letter!r} percent-encoded", encoded.replace(letter, f"%{ord(letter):02X}", 1)))
    return spelled


def other_items(identifier: str) -> list[tuple[str, str]]:
    """(what, identifier) that the spec calls a different item from `identifier`."""
    found = [
        ("its letters' case swapped", identifier.swapcase()),
        ("its NFD form", unicodedata.normalize("NFD", identifier)),
    ]
    return [(what, other) for what, other in found if other != identifier]


def try_variants(ctx: Context, session: Session, collection: Collection, identifier: str) -> None:
    name, get, delete = collection.identifier, collection.item_ops["get"], collection.item_ops["delete"]
    body = ctx.valid_body(collection, identifier)
    created = session.call(collection.create, json=body)
    if created.status != 201:
        reason = f"an identifier with letters of both cases and outside ASCII was refused (HTTP {created.status})"
        session.ledger.skipped(session.surface.name, collection.create.id, CHECK, reason)
        return
    setup = [created]
    for what, segment in same_item_paths(identifier):
        read = session.call(get, url=path(session, collection, segment))
        broken = None if read.status == 200 else f"{name}={identifier!r} with {what} answered {read.status}, not 200"
        if broken is None and differences({name: identifier}, read.json()):
            broken = f"{name}={identifier!r} with {what} read another item"
        session.judge(CHECK, get, read, broken, setup)
    made = []
    for variant in other_items(identifier):
        if distinct(ctx, session, collection, body, variant, setup):
            made.append(variant[1])
    for other in made:
        session.call(delete, {name: other})
    if made:
        still = session.call(get, {name: identifier})
        broken = None if still.status == 200 else f"deleting the variants of {identifier!r} deleted it ({still.status})"
        session.judge(CHECK, get, still, broken, setup)
    session.call(delete, {name: identifier})


def distinct(
    ctx: Context, session: Session, collection: Collection, body: JSON, variant: tuple[str, str], setup: list[Exchange]
) -> bool:
    """The item `body` names, and `variant` (what it is, the other identifier) another item: 404 before it
    exists, then created and read as itself; True when made."""
    name, get = collection.identifier, collection.item_ops["get"]
    identifier, (what, other) = body[name], variant
    before = session.call(get, {name: other})
    broken = None if before.status == 404 else f"{name}={other!r} ({what}) answered {before.status} before it exists"
    if not session.judge(CHECK, get, before, broken, setup):
        return False
    own = {**changed_body(ctx, collection, body), name: other}
    created = session.call(collection.create, json=own)
    if created.status != 201:
        broken = f"{name}={other!r} ({what} of an existing item) is another item; its create answered {created.status}"
        session.judge(CHECK, collection.create, created, broken, setup)
        return 200 <= created.status < 300
    for value, expected in ((other, own), (identifier, body)):
        read = session.call(get, {name: value})
        wrong = [f"answered {read.status}"] if read.status != 200 else differences(expected, read.json())
        broken = f"after creating {name}={other!r} ({what}), {name}={value!r}: " + "; ".join(wrong) if wrong else None
        session.judge(CHECK, get, read, broken, [*setup, created])
    return True
