"""`--shard K/N`: which part of a run's work is this run's, so that N CI runners split one run.

There are two kinds of unit. Each kind is sorted and dealt round-robin: unit n, counted from 0, goes
to shard n mod N + 1.

- Operations, by operationId. An operation's unit holds its Schemathesis phases (examples, coverage,
  fuzzing). It also holds the domain checks that judge one operation at a time: `auth_matrix`,
  `pagination_walk` and `list_scoping`, and `surface_parity`.
- Collections, named by their create operation's operationId. A collection's unit holds the stateful
  phase on the collection's operations, so that the phase keeps the spec's links (create -> read ->
  update -> delete). It also holds the domain checks that work on a collection's items: lifecycle,
  encodings, references, bounds, identifiers and PATCH locality.

The assignment depends only on the spec and N. So every shard of a run computes the same one, and
each unit lands in exactly one shard. 1/1 is the whole run, run as without `--shard`.

The shards must also share the seed. Without `--seed`, each derives it from what every runner has:
the spec's digest and N (`derived_seed`). So N runners started alike agree without being told.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # The CLI's parser imports this module, so it stays cheap to import.
    from contract_tests.spec import Collection, Spec


@dataclass(frozen=True)
class Shard:
    index: int
    """K, from 1."""
    count: int
    """N."""

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    @property
    def whole(self) -> bool:
        return self.count == 1

    def deal(self, units: list[str]) -> frozenset[str]:
        """This shard's share of `units`, sorted and dealt round-robin."""
        return frozenset(unit for n, unit in enumerate(sorted(set(units))) if n % self.count == self.index - 1)

    def operations(self, spec: Spec) -> frozenset[str]:
        """The operationIds whose per-operation work is this shard's."""
        return self.deal(list(spec.operations))

    def collections(self, spec: Spec) -> frozenset[str]:
        """The collections (by create operationId) whose per-collection work is this shard's."""
        return self.deal([collection_name(collection) for collection in spec.collections])


WHOLE = Shard(1, 1)


def derived_seed(spec: Spec, count: int) -> int:
    """The seed of a sharded run without `--seed`.

    It is the first 8 bytes of sha256 over the spec document and N. The document is its parsed content
    in canonical JSON, so a checkout's line endings or YAML layout do not matter."""
    document = json.dumps(spec.raw, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    digest = hashlib.sha256(f"{document}\n{count}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def collection_name(collection: Collection) -> str:
    return collection.create.id


def collection_operations(collection: Collection) -> set[str]:
    """What the stateful phase of a collection runs on. That is its operations and the sub-lists it owns."""
    ops = (collection.create, collection.list_op, *collection.item_ops.values(), *collection.sub_lists)
    return {op.id for op in ops}


def parse_shard(text: str) -> Shard:
    """`K/N` with 1 <= K <= N. It is argparse's type, so a bad value is a usage error that names it."""
    index, slash, count = text.partition("/")
    if not (slash and index.isdigit() and count.isdigit()):
        raise argparse.ArgumentTypeError(f"expected K/N (e.g. 2/4), got {text!r}")
    shard = Shard(int(index), int(count))
    if not 1 <= shard.index <= shard.count:
        raise argparse.ArgumentTypeError(f"K/N needs 1 <= K <= N, got {text!r}")
    return shard
