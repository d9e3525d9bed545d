"""Independent work side by side, with its outcome in a fixed order. This cuts the time to a verdict on a
slow network.

A domain test judges operations (auth_matrix) or collections (the others) one at a time. Each part
writes only items it made. So a test splits into parts as shards split it (`Context.shard_operations`,
`shard_collections`).

The parts run on up to `workers` threads, each into its own ledger. The ledgers are added up in the
order the parts were listed, never the order they finished. So one seed gives the same findings, in
the same order, whatever the concurrency.

Tests that read whole lists or counts (`runner.ALONE`) are cut into pieces that cannot see each other's
writes: a list or a collection, or a group of linked collections (`unlinked`). Such a piece runs with
nothing beside it in its groups (`footprint`) but its own test's pieces: `in_order` starts a piece once
the earlier ones it waits for have ended.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import threading
from collections.abc import Callable, Iterator, Sequence
from collections.abc import Set as AbstractSet
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import replace
from typing import Any, TypeVar

from contract_tests.client.bounded import Limits
from contract_tests.client.bounded_httpx import BoundedHttpx
from contract_tests.client.capacity import bounded_workers, parallel_capacity
from contract_tests.client.keyring import Keyring
from contract_tests.client.pacing import OVERLOADED, BudgetSpent, Pacer
from contract_tests.client.surface import Surface
from contract_tests.judge.domain.data import Context
from contract_tests.judge.domain.http import Session
from contract_tests.judge.domain.media import MEDIA_TYPES, media_types
from contract_tests.options import Options
from contract_tests.outcome.findings import Ledger
from contract_tests.sharding import collection_name
from contract_tests.spec import Operation, Spec

T = TypeVar("T")
_PARSING = threading.Lock()


def parts(ctx: Context, spec: Spec) -> list[Context]:
    """`ctx` split into one context per operation and one per collection of its scope."""
    operations = [name for name in spec.operations if ctx.shard_operations is None or name in ctx.shard_operations]
    collections = [collection_name(c) for c in spec.collections if ctx.collection_is_mine(c)]
    none: frozenset[str] = frozenset()
    return [replace(ctx, shard_operations=frozenset({name}), shard_collections=none) for name in operations] + [
        replace(ctx, shard_operations=none, shard_collections=frozenset({name})) for name in collections
    ]


def per_encoding(ctx: Context, spec: Spec) -> list[Context]:
    """`parts`, each collection's piece cut once more per body encoding its writes accept, for a test
    that runs one chain of requests per encoding, each on an item of its own (`patch_locality`). Behind
    100-300 ms per answer the customers' three chains, one after another, were a run's longest piece
    (40 s)."""

    def chains(part: Context, writes: list[Operation]) -> list[Context]:
        encodings = [media for media in MEDIA_TYPES if any(media in media_types(op) for op in writes)]
        return [replace(part, encodings=frozenset({media})) for media in encodings]

    return _per_chain(ctx, spec, chains)


def per_write(ctx: Context, spec: Spec) -> list[Context]:
    """`parts`, each collection's piece cut once more per write operation (create, replace, update), for a
    test that runs one chain of requests per write, each on an item of its own (`invalid_values_rejected`).
    Behind 100-300 ms per answer its customers' chain, the three one after another, was the domain
    round's longest piece (about 90 requests, 31 s)."""

    def chains(part: Context, writes: list[Operation]) -> list[Context]:
        methods = [method for method in ("post", "put", "patch") if any(op.method == method for op in writes)]
        return [replace(part, writes=frozenset({method})) for method in methods]

    return _per_chain(ctx, spec, chains)


def _per_chain(ctx: Context, spec: Spec, chains: Callable[[Context, list[Operation]], list[Context]]) -> list[Context]:
    """`parts`, each collection's piece replaced by the pieces `chains` cuts it into, given its collections'
    writes (create and item operations); a piece `chains` does not cut stays whole."""
    found = []
    for part in parts(ctx, spec):
        mine = [c for c in spec.collections if part.shard_collections and collection_name(c) in part.shard_collections]
        writes = [op for collection in mine for op in (collection.create, *collection.item_ops.values())]
        found += chains(part, writes) or [part]
    return found


def piece_name(ctx: Context) -> str:
    """A piece's name among a test's pieces.

    It is the piece's collections (a group's joined by "+"), else its operation, and then the chain it
    runs, if it runs one: its body encoding, or its write method. A test not split is "all"."""
    names = sorted(ctx.shard_collections or ()) or sorted(ctx.shard_operations or ())
    chains = [sorted(chain) for chain in (ctx.encodings, ctx.writes) if chain is not None]
    return " ".join(["+".join(names) or "all", *("+".join(chain) for chain in chains)])


def unlinked(ctx: Context, spec: Spec) -> list[Context]:
    """`ctx` split into one context per group of linked collections, each with its collections' operations.

    A product names its product line, so the two are one group. Customers name neither, so they are
    another. No write in one group shows in another's lists. So tests that read whole lists
    (`runner.ALONE`) may run a group each side by side. With one group, or with an operation of no
    collection (whose lists are unknown), the answer is `ctx` unchanged."""
    group = groups(spec)
    owner = {op.id: own for op in spec.operations.values() if (own := spec.collection_of(op)) is not None}
    if group is None or len(set(group.values())) <= 1:
        return [ctx]
    members: dict[str, set[str]] = {}
    for name, root in group.items():
        members.setdefault(root, set()).add(name)
    found = []
    for names in members.values():
        operations = frozenset(op for op, own in owner.items() if collection_name(own) in names)
        mine_ops = operations if ctx.shard_operations is None else operations & ctx.shard_operations
        mine = frozenset(names) if ctx.shard_collections is None else frozenset(names) & ctx.shard_collections
        found.append(replace(ctx, shard_operations=mine_ops, shard_collections=mine))
    return found


def groups(spec: Spec) -> dict[str, str] | None:
    """Each collection's group of linked collections (by name, to the name of one of the group): a
    collection whose items name another's is in its group. None when an operation has no collection,
    so that what it reads and writes is unknown."""
    owners = {op.id: spec.collection_of(op) for op in spec.operations.values()}
    if any(own is None for own in owners.values()):
        return None
    group = {collection_name(c): collection_name(c) for c in spec.collections}

    def root(name: str) -> str:
        while group[name] != name:
            name = group[name]
        return name

    for op in spec.operations.values():
        own = owners[op.id]
        assert own is not None
        for other in spec.references(op).values():
            group[root(collection_name(other))] = root(collection_name(own))
    return {name: root(name) for name in group}


def footprint(ctx: Context, spec: Spec, group: dict[str, str] | None) -> frozenset[str] | None:
    """The groups of linked collections a piece reads or writes: those of its collections and of its
    operations' collections, by `group` (the spec's `groups`, worked out once for all the pieces). None
    for all of them: a piece not cut to some, or a spec with an operation of no collection."""
    if group is None or ctx.shard_operations is None or ctx.shard_collections is None:
        return None
    names = set(ctx.shard_collections)
    for op in ctx.shard_operations:
        own = spec.collection_of(spec.operations[op])
        assert own is not None  # `groups` found every operation's collection
        names.add(collection_name(own))
    return frozenset(group[name] for name in names)


def in_order(work: Sequence[Callable[[], T]], workers: int, waits_for: Sequence[AbstractSet[int]] = ()) -> list[T]:
    """Every piece of `work` run on up to `workers` threads, and the results in `work`'s order.

    Piece `n` starts once the pieces `waits_for[n]` names (earlier ones) have ended; the others start in
    `work`'s order as threads free up. With one worker, or one piece, the work runs in this thread, in
    `work`'s order, which every `waits_for` allows."""
    waits = list(waits_for) or [frozenset()] * len(work)
    if any(m >= n for n, earlier in enumerate(waits) for m in earlier):
        raise ValueError("a piece may wait only for pieces before it")
    if workers <= 1 or len(work) <= 1:
        return [piece() for piece in work]
    results: dict[int, T] = {}
    waiting = list(range(len(work)))
    running: dict[Future[T], int] = {}
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="shop-contract") as pool:
        while waiting or running:
            ready = [n for n in waiting if all(m in results for m in waits[n])]
            for n in ready[: workers - len(running)]:
                waiting.remove(n)
                running[pool.submit(work[n])] = n
            ended, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in sorted(ended, key=running.__getitem__):
                results[running.pop(future)] = future.result()
    return [results[n] for n in range(len(work))]


def parse_one_at_a_time() -> None:
    """Make `ast.parse` take a lock, once per process.

    CPython 3.11 keeps the AST constructor's recursion depth per interpreter, not per thread. So two
    threads parsing at once can raise `SystemError: AST constructor recursion depth mismatch`
    (python/cpython issue 106905, seen on 3.11.7 here). Hypothesis parses source to describe strategies,
    inside Schemathesis' workers and inside our side-by-side parts. So a run with more than one worker
    parses one at a time. Parsing is rare, and nowhere near the requests' path, so the lock costs
    nothing there.
    """
    if getattr(ast.parse, "__wrapped__", None) is not None:
        return
    original = ast.parse

    @functools.wraps(original)
    def parse(*args: Any, **kwargs: Any) -> Any:
        with _PARSING:
            return original(*args, **kwargs)

    ast.parse = parse


def sized(
    options: Options,
    pacer: Pacer | None,
    ledger: Ledger,
    progress: Callable[[str], None],
    probe: Callable[[], int] | None = None,
) -> Options:
    """The options with `--workers auto` made a number.

    The number is as many requests in flight as the latency the run has seen so far asks for
    (`pacer`'s). It is never more than the target serves at once. `probe` measures that with one safe
    request, sent alone and then several at once (client/capacity.py). The progress says what it chose
    and why."""
    if options.workers is None:
        latency = pacer.median_latency() if pacer is not None else None
        workers = pacer.suggested_workers() if pacer is not None else 1
        seen = "no answer seen" if latency is None else f"median latency {latency * 1000:.0f} ms asks {workers}"
        if workers > 1 and probe is not None:
            try:
                capacity = parallel_capacity(probe)
            except BudgetSpent:
                workers, seen = 1, f"{seen}; the time budget ended the capacity probe"
            except Exception as exc:  # Any failure of the probe makes the safe choice, and says so.
                workers, seen = 1, f"{seen}; the capacity probe failed: {type(exc).__name__}"
            else:
                workers = bounded_workers(workers, capacity)
                seen = f"{seen}; {capacity.describe()}"
        progress(f"workers: {workers} (auto: {seen}; --workers N fixes it)")
        options = replace(options, workers=workers, seed=options.seed_value)
    if pacer is not None:
        pacer.set_ceiling(options.workers or 1)
    if (options.workers or 1) > 1:
        parse_one_at_a_time()
    ledger.run.workers = options.workers or 1
    return options


@contextlib.contextmanager
def capacity_probe(
    spec: Spec, surface: Surface, limits: Limits, keyring: Keyring | None
) -> Iterator[Callable[[], int] | None]:
    """The one safe request `--workers auto` measures the target's capacity with.

    It is the first list `surface` serves. It goes past the pacer's limit, which would hold the batch to
    one in flight, but stays within the run's time budget. It goes into no report. Its status is the
    measurement. A 429 or a 503 is a refusal, and is counted (client/capacity.py). Any other answer but
    a 2xx fails the probe."""
    lists = [spec.operations[name] for name in surface.operations if name in spec.operations]
    listing = next((op for op in lists if op.method.upper() == "GET" and not op.path_parameters), None)
    if listing is None:
        yield None
        return
    opened: list[Session] = []  # Made at the first call, so a run whose workers are known sends no probe.

    def send() -> int:
        if not opened:  # The probe's first calls are one at a time (client/capacity.py), so there is no race here.
            opened.append(Session(surface, Ledger(), BoundedHttpx(replace(limits, held=False)), keyring))
        status = opened[0].call(listing).status
        if not 200 <= status < 300 and status not in OVERLOADED:
            raise ValueError(f"{listing.id} answered {status}")
        return status

    try:
        yield send
    finally:
        for session in opened:
            session.close()
