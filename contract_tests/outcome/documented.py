"""What the contract documents of each operation in a run's scope. It is the documented side of API coverage.

It is read from the spec once, when the run starts, into the ledger's coverage (outcome/coverage.py).
From then on the coverage needs no spec. The reports and `shop-contract merge` render it from the
ledger alone.
"""

from __future__ import annotations

from contract_tests.outcome.coverage import UNDOCUMENTED, Coverage, OperationCoverage
from contract_tests.spec import Operation, Spec


def documented_parameters(op: Operation) -> tuple[str, ...]:
    """`in:name` of every parameter of `op`, its path item's and its own."""
    params = [*op.path_item.get("parameters", []), *op.definition.get("parameters", [])]
    return tuple(sorted({f"{param['in']}:{param['name']}" for param in params}))


def documented(surface: str, op: Operation) -> OperationCoverage:
    """`op` on `surface` as the contract documents it, with nothing exercised yet."""
    body = op.definition.get("requestBody", {}).get("content", {})
    schema = op.request_schema or {}
    return OperationCoverage(
        surface=surface,
        operation=op.id,
        method=op.method.upper(),
        path=op.path,
        tag=next(iter(op.definition.get("tags", [])), ""),
        statuses=tuple(key for key in op.definition["responses"] if key != UNDOCUMENTED),
        parameters=documented_parameters(op),
        body_fields=tuple(schema.get("properties", {})),
        media_types=tuple(body),
    )


def plan(coverage: Coverage, spec: Spec, surface: str, operations: list[str]) -> None:
    """Put `operations` of `surface` in the run's scope."""
    for name in operations:
        coverage.operations.setdefault((surface, name), documented(surface, spec.operations[name]))
