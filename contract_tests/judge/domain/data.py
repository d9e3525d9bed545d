"""Request bodies for the domain tests, built from the contract's examples, and representation diffs.

Valid data is the schema's own `example`s with a fresh identifier and existing references. Changed
data moves every other field to another valid value within its bounds.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from contract_tests.check_names import RACE_TRIES
from contract_tests.judge.known import Known
from contract_tests.outcome.standalone import same_value
from contract_tests.sharding import collection_name
from contract_tests.spec import JSON, Collection, Operation, Spec

LONG_TEXT = 60  # A difference in longer text is shown as where it starts, not whole.


@dataclass
class Context:
    """What every domain test needs: the contract, what the run knows about the target, the strict checks."""

    spec: Spec
    known: Known
    strict: frozenset[str] = frozenset()
    include: frozenset[str] = frozenset()
    shard_operations: frozenset[str] | None = None
    """Operations whose per-operation checks are this shard's, or None for all (contract_tests/sharding.py)."""
    shard_collections: frozenset[str] | None = None
    """Collections whose per-collection checks are this shard's, by name, or None for all."""
    race_tries: int = RACE_TRIES
    """Tries of each check of concurrent writes at most (`--race-tries`)."""
    encodings: frozenset[str] | None = None
    """Body encodings whose chains of requests are this piece's, for a test that runs one chain per
    encoding (`patch_locality`), or None for all."""
    writes: frozenset[str] | None = None
    """Write methods ("post", "put", "patch") whose chains of requests are this piece's, for a test that
    runs one chain per write operation (`invalid_values_rejected`), or None for all."""

    def selected(self, *ops: Operation) -> bool:
        return not self.include or any(op.id in self.include for op in ops)

    def operation_is_mine(self, op: Operation) -> bool:
        """Whether this shard checks `op`, for a check that judges one operation at a time."""
        return self.shard_operations is None or op.id in self.shard_operations

    def collection_is_mine(self, collection: Collection) -> bool:
        """Whether this shard checks `collection`, for a check that works on a collection's items."""
        return self.shard_collections is None or collection_name(collection) in self.shard_collections

    def encoding_is_mine(self, media: str) -> bool:
        """Whether this piece runs the chain of requests sent in the body encoding `media`."""
        return self.encodings is None or media in self.encodings

    def write_is_mine(self, op: Operation) -> bool:
        """Whether this piece runs the chain of requests of the write operation `op`."""
        return self.writes is None or op.method in self.writes

    def fresh_identifier(self, collection: Collection) -> Any:
        """An identifier no fixture, no earlier run and no other part of this run uses."""
        return self.known.identities.fresh(collection.request_schema["properties"][collection.identifier])

    def missing_identifier(self, collection: Collection) -> Any:
        """An identifier of an item that does not exist. It is fresh and never created."""
        return self.fresh_identifier(collection)

    def valid_body(self, collection: Collection, identifier: Any, *, nulls: bool = True) -> JSON:
        """The contract's example body with `identifier` and existing references.

        External references hold values the target serves. Unless `nulls`, the body holds no null."""
        schema = collection.request_schema
        body = self.spec.example_body(schema)
        body[collection.identifier] = identifier
        for name in self.spec.references(collection.create):
            if name in self.known.references:
                body[name] = self.known.references[name]
        for name in self.spec.external_references(schema):
            body[name] = self.known.external_value(name, schema["properties"][name])
        return body if nulls else {name: value for name, value in body.items() if value is not None}

    def fixed_fields(self, collection: Collection) -> set[str]:
        """Fields a change keeps. They are the identifier, references, and external references with no other value."""
        schema = collection.request_schema
        external = {
            name for name in self.spec.external_references(schema) if len(self.known.external.get(name) or []) < 2
        }
        return {collection.identifier, *self.spec.references(collection.create), *external}

    def changed_value(self, collection: Collection, name: str, value: Any) -> Any:
        """Another valid value for the field `name`. For an external reference, it is another served value."""
        if name in self.spec.external_references(collection.request_schema):
            served = self.known.external.get(name) or []
            return next((other for other in served if other != value), value)
        return changed_value(collection.request_schema["properties"][name], value)


def changed_value(prop: JSON, value: Any) -> Any:
    """Another valid value for `prop`."""
    if prop.get("format") == "decimal":
        amount = Decimal(value) if value is not None else Decimal(0)
        return f"{amount + 1 if amount < 99999998 else amount - 1:.2f}"
    if prop.get("type") == "integer":
        number = value if isinstance(value, int) else 0
        return number + 1 if number < prop.get("maximum", 2**31 - 1) else number - 1
    text = f"Changed {value}" if value is not None else "Changed"
    return text[: prop.get("maxLength", len(text))]


def changed_body(ctx: Context, collection: Collection, body: JSON) -> JSON:
    """`body` with every field but the identifier and references changed."""
    fixed = ctx.fixed_fields(collection)
    return {
        name: value if name in fixed else ctx.changed_value(collection, name, value) for name, value in body.items()
    }


def differences(expected: JSON, actual: Any, *, form: bool = False) -> list[str]:
    """The fields of `expected` that `actual` does not hold. Decimals are compared by value."""
    if not isinstance(actual, dict):
        return [f"expected a JSON object, got {actual!r}"[:200]]
    return [
        difference(name, value, actual.get(name, "<missing>"))
        for name, value in expected.items()
        if name not in actual or not same_value(value, actual[name], form=form)
    ]


def difference(name: str, expected: Any, actual: Any) -> str:
    """One field's difference. For long text, it is the lengths and where the two part, as a cut or a
    re-encoding shows."""
    if isinstance(expected, str) and isinstance(actual, str) and max(len(expected), len(actual)) > LONG_TEXT:
        at = next((i for i, (a, b) in enumerate(zip(expected, actual, strict=False)) if a != b), None)
        at = min(len(expected), len(actual)) if at is None else at
        return (
            f"`{name}`: expected {len(expected)} characters, got {len(actual)}; from character {at}, "
            f"expected {expected[at : at + 12]!r}, got {actual[at : at + 12]!r}"
        )
    return f"`{name}`: expected {expected!r}, got {actual!r}"
