"""Both stores against a plain-dict model (a Hypothesis state machine), and their domain rules.

Every test here runs on the in-memory store and on the Redis store (a real redis-server, emptied
for each store the test opens: tests/support/redis_server.py)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

from mock_server.settings import DEFAULT_FIXTURES
from mock_server.state import memory
from mock_server.state.fixtures import read_fixtures, record_fields
from mock_server.state.memory import MemoryStore
from mock_server.state.store import KEY_FIELDS, RELATIONS, Conflict, Dataset, InvalidReference, NotFound, Store

LINES = ["Boats", "Cars", "Planes"]
CODES = [f"S{i:02d}" for i in range(8)]


def line(name: str) -> dict[str, Any]:
    return {"productline": name, "textdescription": None, "htmldescription": None, "image": None}


FIELDS = record_fields()


def product(code: str, line_name: str, stock: int = 0) -> dict[str, Any]:
    unset = dict.fromkeys(FIELDS["products"])
    return unset | {"productcode": code, "productline": line_name, "quantityinstock": stock}


OpenStore = Callable[..., Store]  # open_store(dataset=None) -> a store holding only `dataset`


@pytest.fixture(params=["memory", "redis"])
def open_store(request: pytest.FixtureRequest) -> OpenStore:
    if request.param == "memory":
        return lambda dataset=None: MemoryStore(FIELDS, dataset)
    import redis

    from mock_server.state.redis.store import RedisStore

    url: str = request.getfixturevalue("redis_url")

    def open_redis_store(dataset: Dataset | None = None) -> Store:
        redis.Redis.from_url(url).flushdb()
        return RedisStore.open(url, FIELDS, lambda: dataset or {})

    return open_redis_store


class StoreAgainstModel(RuleBasedStateMachine):
    """Random creates, updates, patches and deletes of product lines and products.

    Reads go to `reader`: the store itself, or another replica of the same state.
    """

    def __init__(self, store: Store, reader: Store | None = None) -> None:
        super().__init__()
        self.store = store
        self.reader = reader or store
        self.lines: dict[str, dict[str, Any]] = {}
        self.products: dict[str, dict[str, Any]] = {}

    @rule(name=st.sampled_from(LINES))
    def create_line(self, name: str) -> None:
        if name in self.lines:
            with pytest.raises(Conflict):
                self.store.create("productlines", line(name))
        else:
            self.store.create("productlines", line(name))
            self.lines[name] = line(name)

    @rule(name=st.sampled_from(LINES))
    def delete_line(self, name: str) -> None:
        if name not in self.lines:
            with pytest.raises(NotFound):
                self.store.delete("productlines", name)
        elif any(p["productline"] == name for p in self.products.values()):
            with pytest.raises(Conflict):
                self.store.delete("productlines", name)
        else:
            self.store.delete("productlines", name)
            del self.lines[name]

    @rule(code=st.sampled_from(CODES), line_name=st.sampled_from(LINES), stock=st.integers(-5, 5))
    def create_product(self, code: str, line_name: str, stock: int) -> None:
        record = product(code, line_name, stock)
        if code in self.products:
            with pytest.raises(Conflict):
                self.store.create("products", record)
        elif line_name not in self.lines:
            with pytest.raises(InvalidReference):
                self.store.create("products", record)
        else:
            assert self.store.create("products", record) == record
            self.products[code] = record

    @rule(code=st.sampled_from(CODES), line_name=st.none() | st.sampled_from(LINES), stock=st.integers(-5, 5))
    def patch_product(self, code: str, line_name: str | None, stock: int) -> None:
        changes: dict[str, Any] = {"quantityinstock": stock}
        if line_name is not None:
            changes["productline"] = line_name
        if code not in self.products:
            with pytest.raises(NotFound):
                self.store.update("products", code, changes)
        elif line_name is not None and line_name not in self.lines:
            with pytest.raises(InvalidReference):
                self.store.update("products", code, changes)
        else:
            self.products[code] = {**self.products[code], **changes}
            assert self.store.update("products", code, changes) == self.products[code]

    @rule(code=st.sampled_from(CODES), other=st.sampled_from(CODES))
    def change_identifier(self, code: str, other: str) -> None:
        if code in self.products and other != code:
            with pytest.raises(Conflict):
                self.store.update("products", code, {"productcode": other})

    @rule(code=st.sampled_from(CODES))
    def delete_product(self, code: str) -> None:
        if code in self.products:
            self.store.delete("products", code)
            del self.products[code]
        else:
            with pytest.raises(NotFound):
                self.store.delete("products", code)

    @rule(offset=st.integers(0, 9), limit=st.integers(1, 4), owner=st.sampled_from(LINES))
    def pages_agree(self, offset: int, limit: int, owner: str) -> None:
        expected = [self.products[c] for c in sorted(self.products)][offset : offset + limit]
        assert self.reader.page("products", offset, limit) == expected
        assert self.reader.counted_page("products", offset, limit) == (len(self.products), expected)
        if owner in self.lines:
            owned = sorted(c for c, p in self.products.items() if p["productline"] == owner)
            count, page = self.reader.owned("products", "productline", owner, offset, limit)
            assert count == len(owned)
            assert [p["productcode"] for p in page] == owned[offset : offset + limit]
        else:
            with pytest.raises(NotFound):
                self.reader.owned("products", "productline", owner, offset, limit)

    @rule(code=st.sampled_from(CODES), name=st.sampled_from(LINES))
    def items_agree(self, code: str, name: str) -> None:
        for collection, key, model in (("products", code, self.products), ("productlines", name, self.lines)):
            if key in model:
                assert self.reader.get(collection, key) == model[key]
            else:
                with pytest.raises(NotFound):
                    self.reader.get(collection, key)

    @invariant()
    def items_and_indexes_agree(self) -> None:
        assert self.reader.count("products") == len(self.products)
        assert self.reader.count("productlines") == len(self.lines)
        assert list(self.store.inconsistencies()) == []


def test_the_store_agrees_with_a_model(open_store: OpenStore, request: pytest.FixtureRequest) -> None:
    # a round trip per operation: fewer examples on Redis keep this test within seconds
    examples = {"memory": 60, "redis": 20}[request.node.callspec.params["open_store"]]
    run_state_machine_as_test(
        lambda: StoreAgainstModel(open_store()),
        settings=settings(max_examples=examples, stateful_step_count=30, deadline=None),
    )


def test_a_replica_reads_what_another_wrote(redis_url: str) -> None:
    """Two Redis stores on one state: every read on the second sees every write of the first at once."""
    import redis

    from mock_server.state.redis.store import RedisStore

    def replicas() -> StoreAgainstModel:
        redis.Redis.from_url(redis_url).flushdb()
        writer = RedisStore.open(redis_url, FIELDS, dict)
        return StoreAgainstModel(writer, RedisStore.open(redis_url, FIELDS, dict))

    run_state_machine_as_test(replicas, settings=settings(max_examples=20, stateful_step_count=30, deadline=None))


def test_records_handed_out_are_copies(open_store: OpenStore) -> None:
    store = open_store({"productlines": [line("Cars")]})
    store.get("productlines", "Cars")["textdescription"] = "changed"
    store.page("productlines", 0, 1)[0]["textdescription"] = "changed"
    assert store.get("productlines", "Cars")["textdescription"] is None


def test_the_fixture_state_is_consistent(open_store: OpenStore) -> None:
    store = open_store(read_fixtures(DEFAULT_FIXTURES))
    assert list(store.inconsistencies()) == []
    count, page = store.owned("orders", "customernumber", 103, 0, 100)
    assert count == len(page) > 0


def test_every_relation_is_indexed_in_memory() -> None:
    store = MemoryStore(FIELDS, read_fixtures(DEFAULT_FIXTURES))
    assert {(r.child, r.field) for r in RELATIONS} == set(store.indexes)
    assert set(KEY_FIELDS) == set(store.tables)


def test_both_stores_hold_the_same_fixture_state(open_store: OpenStore) -> None:
    memory = MemoryStore(FIELDS, read_fixtures(DEFAULT_FIXTURES))
    store = open_store(read_fixtures(DEFAULT_FIXTURES))
    assert store.export() == memory.export()
    for relation in RELATIONS:
        owner = memory.page(relation.child, 0, 1)[0][relation.field]
        assert store.owned(relation.child, relation.field, owner, 1, 3) == memory.owned(
            relation.child, relation.field, owner, 1, 3
        )


def test_reset_goes_back_to_the_seed_after_any_writes(open_store: OpenStore) -> None:
    store = open_store(read_fixtures(DEFAULT_FIXTURES))
    seed = store.export()
    code = seed["products"][0]["productcode"]
    store.update("products", code, {"quantityinstock": 1})
    store.create("products", product("S99_0001", seed["productlines"][0]["productline"]))
    store.delete("orderdetails", seed["orderdetails"][0]["id"])
    store.replace_all({"productlines": [line("Boats")]})
    store.reset()
    assert store.export() == seed
    assert list(store.inconsistencies()) == []


def test_a_bulk_load_that_fails_part_way_changes_nothing(open_store: OpenStore) -> None:
    store = open_store({"productlines": [line("Cars")]})

    def failing() -> Any:
        yield line("Boats")
        raise ValueError("unreadable")

    with pytest.raises(ValueError, match="unreadable"):
        store.replace_all({"productlines": failing()})
    assert [r["productline"] for r in store.page("productlines", 0, 10)] == ["Cars"]
    assert list(store.inconsistencies()) == []


def test_a_record_keeps_the_fields_of_its_collection_only(open_store: OpenStore) -> None:
    store = open_store(
        {"productlines": [{**line("Cars"), "extra": 1}], "products": [{"productcode": "S1", "productline": "Cars"}]},
    )
    assert store.get("productlines", "Cars") == line("Cars")
    assert store.get("products", "S1") == product("S1", "Cars") | {"quantityinstock": None}


def test_owner_lists_past_the_large_mark_agree_with_the_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """An owner's keys become a SortedList past `memory.LARGE`: at a mark of 2, every product line
    of the model's runs crosses it both ways, and the store must still agree with the model."""
    monkeypatch.setattr(memory, "LARGE", 2)
    run_state_machine_as_test(
        lambda: StoreAgainstModel(MemoryStore(FIELDS)),
        settings=settings(max_examples=40, stateful_step_count=30, deadline=None),
    )
    seeded = MemoryStore(FIELDS, {"productlines": [line("Cars")], "products": [product(c, "Cars") for c in CODES]})
    assert list(seeded.inconsistencies()) == []  # a bulk load builds the large lists sorted too
    assert seeded.owned("products", "productline", "Cars", 2, 3) == (len(CODES), seeded.page("products", 2, 3))


def write_seconds(store: MemoryStore, writes: int) -> float:
    """CPU time of `writes` creates of products sorting before every other, then their deletes."""
    codes = [f"A{n:05d}" for n in range(writes)]
    started = time.process_time()
    for code in codes:
        store.create("products", product(code, "Cars"))
    for code in codes:
        store.delete("products", code)
    return time.process_time() - started


def test_a_write_costs_no_more_among_many_products_than_among_few() -> None:
    """A POST or DELETE among 10^5 products costs about what it costs among ten.

    Keys were kept in plain sorted lists, so each insertion or removal moved every key after it, in
    the table's order and in the product line's index: at 10^5 products, a write at the front cost
    some 15 times one in a small store, and the store grew by one product a POST (issue 42)."""
    dataset = {"productlines": [line("Cars")]}
    small = MemoryStore(FIELDS, {**dataset, "products": [product(f"S{n:06d}", "Cars") for n in range(10)]})
    large = MemoryStore(FIELDS, {**dataset, "products": [product(f"S{n:06d}", "Cars") for n in range(100_000)]})
    best = {"small": float("inf"), "large": float("inf")}
    for _ in range(5):  # interleaved, the best of each: other work on the machine falls on both alike
        best["small"] = min(best["small"], write_seconds(small, 500))
        best["large"] = min(best["large"], write_seconds(large, 500))
    assert best["large"] < 4 * best["small"], best
    assert list(large.inconsistencies()) == []
