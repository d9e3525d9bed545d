"""The copy-on-write store behaves as a copy of the seed would: the same random operations applied to
an `OverlayStore` and to a `MemoryStore` give the same answers, errors and states, and never touch
the shared base."""

from __future__ import annotations

import random
from typing import Any

import pytest

from mock_server.settings import DEFAULT_FIXTURES
from mock_server.state.fixtures import read_fixtures, record_fields
from mock_server.state.memory import MemoryStore
from mock_server.state.overlay import KeyDelta, OverlayStore
from mock_server.state.store import COLLECTIONS, KEY_FIELDS, RELATIONS, Key, StoreError


def seeded() -> MemoryStore:
    return MemoryStore(record_fields(), read_fixtures(DEFAULT_FIXTURES))


def outcome(method: Any, *args: Any) -> Any:
    """What a store call answered, or the error it raised (type and message)."""
    try:
        return ("ok", method(*args))
    except StoreError as error:
        return (type(error).__name__, str(error))


def new_key(rng: random.Random, keys: list[Key], sample: Key) -> Key:
    """An existing key now and then (a conflict), else a fresh one of the same type."""
    if keys and rng.random() < 0.2:
        return rng.choice(keys)
    if isinstance(sample, int):
        return rng.randint(1, max(keys, default=0) + 50)  # type: ignore[type-var]
    return f"K{rng.randint(0, 10**6)}"


def reference(rng: random.Random, store: MemoryStore, parent: str) -> Key:
    keys = store.tables[parent].order
    if not keys or rng.random() < 0.1:
        return -1 if isinstance(keys[0] if keys else 0, int) else "missing"
    return rng.choice(keys)


def operate(rng: random.Random, model: MemoryStore, session: OverlayStore) -> None:
    collection = rng.choice(COLLECTIONS)
    table = model.tables[collection]
    keys = table.order
    refs = [r for r in RELATIONS if r.child == collection]
    choice = rng.random()
    if choice < 0.45 and keys:
        template = table.record(table.rows[rng.choice(keys)])
        record = {**template, KEY_FIELDS[collection]: new_key(rng, keys, template[KEY_FIELDS[collection]])}
        for relation in refs:
            record[relation.field] = reference(rng, model, relation.parent)
        assert outcome(model.create, collection, dict(record)) == outcome(session.create, collection, dict(record))
    elif choice < 0.75 and keys:
        key = rng.choice(keys) if rng.random() < 0.9 else new_key(rng, [], keys[0])
        changes = {r.field: reference(rng, model, r.parent) for r in refs if rng.random() < 0.7}
        assert outcome(model.update, collection, key, dict(changes)) == outcome(
            session.update, collection, key, dict(changes)
        )
    elif keys:
        key = rng.choice(keys)
        assert outcome(model.delete, collection, key) == outcome(session.delete, collection, key)


def assert_same_reads(rng: random.Random, model: MemoryStore, session: OverlayStore) -> None:
    assert session.export() == model.export()
    for collection in COLLECTIONS:
        count = model.count(collection)
        assert session.count(collection) == count
        for _ in range(5):
            offset, limit = rng.randint(0, count + 2), rng.randint(1, 30)
            assert session.counted_page(collection, offset, limit) == model.counted_page(collection, offset, limit)
    for relation in RELATIONS:
        for owner in rng.sample(model.tables[relation.parent].order, min(5, model.count(relation.parent))):
            offset, limit = rng.randint(0, 5), rng.randint(1, 10)
            asked = (relation.child, relation.field, owner, offset, limit)
            assert outcome(session.owned, *asked) == outcome(model.owned, *asked)


@pytest.mark.parametrize("seed", range(6))
def test_a_session_answers_as_its_own_copy_of_the_seed_would(seed: int) -> None:
    rng = random.Random(seed)
    base = seeded().seed_store()
    before = base.export()
    model, session = seeded(), OverlayStore(base)
    for step in range(300):
        operate(rng, model, session)
        if step % 50 == 0:
            assert_same_reads(rng, model, session)
    assert_same_reads(rng, model, session)
    assert list(session.inconsistencies()) == []
    assert base.export() == before  # the shared base is never written


def test_reading_holds_nothing_and_reset_drops_the_changes() -> None:
    base = seeded().seed_store()
    session = OverlayStore(base)
    session.export()
    session.owned("products", "productline", "Classic Cars", 0, 10)
    assert session.size() == 0
    product = session.get("products", "S10_1678")
    session.update("products", "S10_1678", {"productname": "Changed"})
    session.create("products", {**product, "productcode": "NEW_1"})
    session.delete("products", "NEW_1")  # created here, deleted here: nothing kept
    assert session.size() == 1
    session.reset()
    assert session.size() == 0
    assert session.export() == base.export()


def test_an_import_is_the_sessions_own_and_reset_goes_back_to_the_seed() -> None:
    base = seeded().seed_store()
    session = OverlayStore(base)
    session.replace_all({"productlines": [base.get("productlines", "Classic Cars")]})
    assert session.count("productlines") == 1 and session.count("products") == 0
    assert session.size() == 1
    session.reset()
    assert session.export() == base.export()


@pytest.mark.parametrize("seed", range(20))
def test_a_key_delta_pages_as_the_merged_list_would(seed: int) -> None:
    rng = random.Random(seed)
    base = sorted(rng.sample(range(0, 200, 2), 40))
    delta, merged = KeyDelta(), set(base)
    for _ in range(30):
        if rng.random() < 0.5:
            key = rng.randrange(1, 200, 2)  # odd: never in the base
            delta.add(key, in_base=False) if rng.random() < 0.7 else delta.discard(key, in_base=False)
            merged.add(key) if key in delta.added else merged.discard(key)
        else:
            key = rng.choice(base)
            delta.discard(key, in_base=True) if rng.random() < 0.7 else delta.add(key, in_base=True)
            merged.discard(key) if key in delta.removed else merged.add(key)
    expected = sorted(merged)
    assert delta.count(base) == len(expected)
    for offset in range(len(expected) + 2):
        for limit in (1, 3, 10, 100):
            assert delta.page(base, offset, limit) == expected[offset : offset + limit]
