"""Which pieces of the domain tests wait for which (runner.Piece, run/scheduling.py `footprint`), and
`in_order` keeping those waits on any number of threads."""

from __future__ import annotations

import threading
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contract_tests.client.surface import Surface
from contract_tests.identities import Identities
from contract_tests.judge.domain.data import Context
from contract_tests.judge.domain.media import media_types
from contract_tests.judge.known import Known
from contract_tests.run import scheduling
from contract_tests.run.runner import PER_SURFACE, Piece, _split, listed
from contract_tests.sharding import collection_name
from contract_tests.spec import Spec

SPEC = Spec.load()
CONTEXT = Context(SPEC, Known(Identities()))


def surface(name: str) -> Surface:
    return Surface(name, f"http://127.0.0.1:1/{name}", tuple(SPEC.operations), {}, {})


def pieces(*surfaces: str) -> list[Piece]:
    """As `runner._side_by_side` lists them."""
    return listed(CONTEXT, [(surface(name), list(PER_SURFACE)) for name in surfaces])


def group_of(collection: str) -> str:
    groups = scheduling.groups(SPEC)
    assert groups is not None
    return groups[collection]


def test_a_piece_reads_and_writes_the_groups_of_its_collections_and_operations() -> None:
    products, customers = group_of("create_product"), group_of("create_customer")
    assert products == group_of("create_product_line") != customers  # a product names its product line
    by_name = {scheduling.piece_name(piece.part): piece.footprint for piece in pieces("backend")}
    assert by_name["create_product"] == {products}
    assert by_name["get_product_line_products"] == {products}
    assert by_name["list_customers"] == by_name["get_customer_orders"] == {customers}
    assert scheduling.footprint(CONTEXT, SPEC, scheduling.groups(SPEC)) is None  # a test not cut: every group


def test_a_piece_waits_for_every_earlier_one_sharing_a_group_when_one_of_the_two_reads_whole_lists() -> None:
    listed = pieces("backend", "gateway")
    for n, piece in enumerate(listed):
        for earlier in listed[:n]:
            shared = piece.footprint is None or earlier.footprint is None or bool(piece.footprint & earlier.footprint)
            same_test = (piece.surface.name, piece.name) == (earlier.surface.name, earlier.name)
            expected = shared and (piece.alone or earlier.alone) and not same_test
            assert piece.waits_for(earlier) == expected, (piece, earlier)


def test_every_surfaces_list_readers_come_first_and_only_the_customers_writers_wait_for_the_gateways() -> None:
    """The gateway serves customers only. Its tests that read whole lists come before any surface's other
    tests: the backend's other tests on customers wait for them, those on the catalog run beside them.
    Listed after the backend's other tests, they waited for those, and all on the customers for them."""
    listed_pieces = pieces("backend", "gateway")
    alone = [piece.alone for piece in listed_pieces]
    assert alone == sorted(alone, reverse=True)  # every list reader before every other test
    customers = group_of("create_customer")
    walk = next(
        p for p in listed_pieces if (p.surface.name, p.name, p.footprint) == ("gateway", "pagination_walk", {customers})
    )
    backend = [p for p in listed_pieces if p.surface.name == "backend" and not p.alone]
    waiting = [p for p in backend if p.waits_for(walk)]
    assert waiting and all(p.footprint is None or customers in p.footprint for p in waiting)
    assert any(p.footprint is not None and customers not in p.footprint and not p.waits_for(walk) for p in backend)
    assert not any(p.waits_for(q) for p in backend for q in backend)  # the writers of their own items


@settings(max_examples=40, deadline=None)
@given(
    waits=st.lists(st.sets(st.integers(0, 30), max_size=4), min_size=1, max_size=30),
    workers=st.integers(1, 6),
)
def test_in_order_starts_a_piece_only_after_those_it_waits_for_and_answers_in_order(
    waits: list[set[int]], workers: int
) -> None:
    waits_for = [frozenset(m for m in wanted if m < n) for n, wanted in enumerate(waits)]
    events: list[tuple[str, int]] = []
    lock = threading.Lock()
    in_flight = [0, 0]

    def piece(n: int) -> int:
        with lock:
            events.append(("start", n))
            in_flight[0] += 1
            in_flight[1] = max(in_flight[1], in_flight[0])
        time.sleep(0.001 * (n % 3))
        with lock:
            events.append(("end", n))
            in_flight[0] -= 1
        return n * 10

    work = [lambda n=n: piece(n) for n in range(len(waits_for))]
    assert scheduling.in_order(work, workers, waits_for) == [n * 10 for n in range(len(work))]
    for n, earlier in enumerate(waits_for):
        start = events.index(("start", n))
        assert all(events.index(("end", m)) < start for m in earlier)
    assert in_flight[1] <= workers
    if workers == 1:
        assert [n for kind, n in events if kind == "start"] == list(range(len(work)))


def test_in_order_refuses_a_wait_for_a_later_piece() -> None:
    with pytest.raises(ValueError, match="only for pieces before it"):
        scheduling.in_order([lambda: 1, lambda: 2], 2, [frozenset({1}), frozenset()])


def test_every_group_a_footprint_names_is_one_of_the_specs() -> None:
    groups = scheduling.groups(SPEC)
    assert groups is not None
    assert set(groups) == {collection_name(c) for c in SPEC.collections}
    for piece in pieces("backend"):
        assert piece.footprint is None or piece.footprint <= set(groups.values())


def test_patch_locality_runs_one_piece_per_collection_and_encoding_and_each_chain_once() -> None:
    """Its chains (one item each, patched field by field in one encoding) run side by side; every
    encoding a collection's PATCH accepts is one piece's, and no piece runs another's."""
    cut = _split("patch_locality")(CONTEXT, SPEC)
    for collection in SPEC.collections:
        name = collection_name(collection)
        mine = [part for part in cut if part.shard_collections == {name}]
        accepted = media_types(collection.item_ops["patch"])
        assert len(accepted) > 1
        assert sorted(media for part in mine for media in part.encodings or ()) == sorted(accepted)
        assert all(len(part.encodings or ()) == 1 for part in mine)
        names = {scheduling.piece_name(part) for part in mine}
        assert names == {f"{name} {media}" for media in accepted}
    assert all(part.encodings is None for part in cut if not part.shard_collections)  # per-operation pieces


def test_invalid_values_rejected_runs_one_piece_per_collection_and_write_and_each_chain_once() -> None:
    """Its chains (one write operation's invalid values, a replace's and an update's on an item of their
    own) run side by side; each of a collection's writes is one piece's, and no piece runs another's."""
    cut = _split("invalid_values_rejected")(CONTEXT, SPEC)
    for collection in SPEC.collections:
        name = collection_name(collection)
        mine = [part for part in cut if part.shard_collections == {name}]
        writes = [collection.create, collection.item_ops["put"], collection.item_ops["patch"]]
        assert sorted(method for part in mine for method in part.writes or ()) == ["patch", "post", "put"]
        for op in writes:
            (owner,) = [part for part in mine if part.write_is_mine(op)]
            assert scheduling.piece_name(owner) == f"{name} {op.method}"
    assert all(part.writes is None for part in cut if not part.shard_collections)  # per-operation pieces
    assert all(CONTEXT.write_is_mine(c.create) for c in SPEC.collections)  # not split: every chain
