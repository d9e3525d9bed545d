"""`identifier_variants`: the forms of an identifier the spec calls the same item, and those it calls
different items, are tried both ways (`identifiers-exact`).

For each collection with a string identifier, an item is created whose identifier mixes letter cases
and holds a non-ASCII letter in its composed form (`STEM`).
- The same item is read by its path with the percent-escapes' hex digits in lower case, and by its
  path with an ASCII letter percent-encoded.
- Another item is the identifier in its decomposed Unicode form (NFD). It reads 404 while only the
  first exists. It is then created (201, not a duplicate) and reads back as itself with its own
  fields, and the first item is unchanged.
- Letter case may count or not, as long as it does so consistently. The identifier with every
  letter's case swapped may read 404 and then be created as another item. Or it may read the first
  item as it was stored, in its own spelling, and its create is refused as a duplicate. That refusal
  is 409, or 400 as `duplicate-identifier` admits. A mix of the two is the violation, and so are
  another status or an item answered under another spelling.

Everything made is deleted, and the first item still reads after the others are gone. A first create
refused with a 4xx is admitted (`identifiers-in-paths`) and listed as not exercised.

An integer identifier's near misses are the other spellings of its number (`number_spellings`).

Near misses are tried in every run, before any variant is made. They are the identifiers a careless
service confuses with the item's (`near_misses`). They are white space around or inside it, one
character more or less, the identifier percent-encoded twice, and its NFD form. Each is read,
replaced, patched and deleted. Each is another item, which does not exist, so every answer is 404, and
the item reads unchanged afterwards.
"""

from __future__ import annotations

import re
import unicodedata
from urllib.parse import quote, unquote

from contract_tests.judge.domain import number_spellings
from contract_tests.judge.domain.data import Context, changed_body, differences
from contract_tests.judge.domain.http import Exchange, Session
from contract_tests.spec import JSON, Collection

CHECK = "identifier_variants"
STEM = "Éa"
"""A capital letter outside ASCII, composed as U+00C9, and a lower-case ASCII one."""
DUPLICATE = (409, 400)
"""What a duplicate identifier's create answers. It is 409, or 400 as DRF's unique validator answers
(`duplicate-identifier`)."""


def run(ctx: Context, session: Session) -> None:
    for collection in ctx.spec.collections:
        ops = [collection.create, *collection.item_ops.values()]
        prop = collection.request_schema["properties"][collection.identifier]
        tried = (
            session.serves(*ops)
            and ctx.selected(collection.create, collection.item_ops["get"])
            and ctx.collection_is_mine(collection)
        )
        if tried and prop.get("type") == "string":
            try_variants(ctx, session, collection, ctx.known.identities.string(prop, STEM))
        elif tried and prop.get("type") == "integer":
            number_spellings.try_spellings(ctx, session, collection, ctx.fresh_identifier(collection))


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
    other = unicodedata.normalize("NFD", identifier)
    return [("its NFD form", other)] if other != identifier else []


def near_misses(identifier: str) -> list[tuple[str, str]]:
    """(what, path segment) of identifiers a careless service confuses with `identifier`, each another item.

    They are white space around or inside it, one character more or less, percent-encoded twice, and its
    NFD form. Its letter case is left to `case_variant`, since the spec admits it as the same item or
    another."""
    others = [
        ("a leading space", f" {identifier}"),
        ("a trailing space", f"{identifier} "),
        ("a space inside", f"{identifier[:1]} {identifier[1:]}"),
        ("one character more", identifier + identifier[-1]),
        ("one character less", identifier[:-1]),
        *other_items(identifier),
    ]
    segments = [(what, quote(other, safe="")) for what, other in others if other and other != identifier]
    return [*segments, ("percent-encoded twice", quote(quote(identifier, safe=""), safe=""))]


def near_misses_not_found(
    ctx: Context, session: Session, collection: Collection, body: JSON, setup: list[Exchange]
) -> None:
    """Each near miss of the item of `body` is another item, which does not exist.

    So a read, replace, patch and delete of it answer 404. A replace body longer than the field's bound
    may answer 400. The item is unchanged after all of them."""
    name, get = collection.identifier, collection.item_ops["get"]
    changed = changed_body(ctx, collection, body)
    bound = collection.request_schema["properties"][name].get("maxLength")
    for what, segment in near_misses(body[name]):
        url = path(session, collection, segment)
        other = unquote(segment)
        for method in ("get", "put", "patch", "delete"):
            op = collection.item_ops[method]
            content = {} if method in ("get", "delete") else {"json": {**changed, name: other}}
            if method == "patch":
                content["json"].pop(name)
            answer = session.call(op, url=url, **content)
            allowed = (404, 400) if method == "put" and bound is not None and len(other) > bound else (404,)
            broken = None
            if answer.status not in allowed:
                broken = (
                    f"{name}={other!r} ({body[name]!r} with {what}: no such item) answered {answer.status}, not 404"
                )
            session.judge(CHECK, op, answer, broken, setup)
    still = session.call(get, {name: body[name]})
    wrong = [f"answered {still.status}"] if still.status != 200 else differences(body, still.json())
    broken = f"{name}={body[name]!r} after its near misses were sent: " + "; ".join(wrong) if wrong else None
    session.judge(CHECK, get, still, broken, setup)


def try_variants(ctx: Context, session: Session, collection: Collection, identifier: str) -> None:
    name, get, delete = collection.identifier, collection.item_ops["get"], collection.item_ops["delete"]
    body = ctx.valid_body(collection, identifier)
    what = "an item whose identifier has letters of both cases and outside ASCII"
    created = session.create_for(CHECK, collection.create, collection, body, what)
    if created is None:
        return
    setup = [created]
    for what, segment in same_item_paths(identifier):
        read = session.call(get, url=path(session, collection, segment))
        broken = None if read.status == 200 else f"{name}={identifier!r} with {what} answered {read.status}, not 200"
        if broken is None and differences({name: identifier}, read.json()):
            broken = f"{name}={identifier!r} with {what} read another item"
        session.judge(CHECK, get, read, broken, setup)
    near_misses_not_found(ctx, session, collection, body, setup)
    made = [
        variant[1] for variant in other_items(identifier) if distinct(ctx, session, collection, body, variant, setup)
    ]
    swapped = identifier.swapcase()
    if swapped != identifier and case_variant(ctx, session, collection, body, swapped, setup):
        made.append(swapped)
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
    """Judge that `variant` (what it is, the other identifier) is an item apart from the one `body` names.

    It answers 404 before it exists, then is created and read as itself. True when made."""
    name, get = collection.identifier, collection.item_ops["get"]
    what, other = variant
    before = session.call(get, {name: other})
    broken = None if before.status == 404 else f"{name}={other!r} ({what}) answered {before.status} before it exists"
    if not session.judge(CHECK, get, before, broken, setup):
        return False
    return created_apart(ctx, session, collection, body, variant, [*setup, before])


def case_variant(
    ctx: Context, session: Session, collection: Collection, body: JSON, other: str, setup: list[Exchange]
) -> bool:
    """Judge `other`, the identifier in body with its letters' case swapped, as another item or the same.

    As another item, it answers 404 and is then created apart. As the same item, it is read as stored, in
    its own spelling, and its create is refused as a duplicate. True when made."""
    name, get, what = collection.identifier, collection.item_ops["get"], "its letters' case swapped"
    before = session.call(get, {name: other})
    if before.status == 404:
        session.judge(CHECK, get, before, None, setup)
        return created_apart(ctx, session, collection, body, (what, other), [*setup, before])
    wrong = [f"answered {before.status}, neither 404 (another item) nor 200"] if before.status != 200 else []
    wrong = wrong or differences(body, before.json())
    broken = f"{name}={other!r} ({what}), before it was created: " + "; ".join(wrong) if wrong else None
    if not session.judge(CHECK, get, before, broken, setup):
        return False
    again = session.call(collection.create, json={**changed_body(ctx, collection, body), name: other})
    broken = None
    if again.status not in DUPLICATE:
        broken = (
            f"{name}={other!r} ({what}) reads the item {body[name]!r}, so letter case is ignored, but its create "
            f"answered {again.status}, not a duplicate's {' or '.join(map(str, DUPLICATE))}"
        )
    session.judge(CHECK, collection.create, again, broken, [*setup, before])
    return 200 <= again.status < 300


def created_apart(
    ctx: Context, session: Session, collection: Collection, body: JSON, variant: tuple[str, str], setup: list[Exchange]
) -> bool:
    """Create `variant` (what it is, the other identifier), which read 404, as another item.

    The new item must read as itself while the item of `body` is unchanged. True when made."""
    name, get = collection.identifier, collection.item_ops["get"]
    what, other = variant
    own = {**changed_body(ctx, collection, body), name: other}
    created = session.call(collection.create, json=own)
    if created.status != 201:
        refused = f"{name}={other!r} ({what} of an existing item) read 404, another item, but its create answered"
        session.judge(CHECK, collection.create, created, f"{refused} {created.status}", setup)
        return 200 <= created.status < 300
    for value, expected in ((other, own), (body[name], body)):
        read = session.call(get, {name: value})
        wrong = [f"answered {read.status}"] if read.status != 200 else differences(expected, read.json())
        broken = f"after creating {name}={other!r} ({what}), {name}={value!r}: " + "; ".join(wrong) if wrong else None
        session.judge(CHECK, get, read, broken, [*setup, created])
    return True
