"""Request bodies for the domain tests, built from the contract's examples, and representation diffs.

Valid data is the schema's own `example`s with a fresh identifier and existing references; changed
data moves every other field to another valid value within its bounds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from contract_tests.checks import same_value
from contract_tests.spec import JSON, Collection, Operation, Spec


@dataclass
class Context:
    """What every domain test needs: the contract, the run's tag, and identifiers that exist on the target."""

    spec: Spec
    tag: int
    """The run's tag (`Options.run_tag`), folded into the identifiers the domain tests create."""
    existing: dict[str, Any]
    """An existing identifier per referenced collection identifier field (e.g. `productline`)."""
    strict: frozenset[str] = frozenset()
    include: frozenset[str] = frozenset()
    _issued: int = field(default=0)

    def selected(self, *ops: Operation) -> bool:
        return not self.include or any(op.id in self.include for op in ops)

    def fresh_identifier(self, collection: Collection) -> Any:
        """An identifier no fixture and no earlier run uses."""
        self._issued += 1
        prop = collection.request_schema["properties"][collection.identifier]
        if prop.get("type") == "integer":
            return 1_900_000_000 + self.tag * 1000 + self._issued
        return f"ct{self.tag}-{self._issued}"[: prop.get("maxLength", 50)]

    def missing_identifier(self, collection: Collection) -> Any:
        """An identifier of an item that does not exist."""
        prop = collection.request_schema["properties"][collection.identifier]
        return 2_147_000_000 if prop.get("type") == "integer" else f"ct-missing-{self.tag}"

    def valid_body(self, collection: Collection, identifier: Any, *, nulls: bool = True) -> JSON:
        """The contract's example body with `identifier`, existing references and, unless `nulls`, no null."""
        body = self.spec.example_body(collection.request_schema)
        body[collection.identifier] = identifier
        for name in self.spec.references(collection.create):
            body[name] = self.existing[name]
        return body if nulls else {name: value for name, value in body.items() if value is not None}


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
    fixed = {collection.identifier, *ctx.spec.references(collection.create)}
    props = collection.request_schema["properties"]
    return {name: value if name in fixed else changed_value(props[name], value) for name, value in body.items()}


def differences(expected: JSON, actual: Any, *, form: bool = False) -> list[str]:
    """The fields of `expected` that `actual` does not hold (decimals compared by value)."""
    if not isinstance(actual, dict):
        return [f"expected a JSON object, got {actual!r}"[:200]]
    return [
        f"`{name}`: expected {value!r}, got {actual.get(name, '<missing>')!r}"
        for name, value in expected.items()
        if name not in actual or not same_value(value, actual[name], form=form)
    ]


def as_form(body: JSON) -> dict[str, str]:
    """Form fields: numbers as their decimal text, null as the empty value (the contract's encoding)."""
    return {name: "" if value is None else str(value) for name, value in body.items()}
