"""`auth_matrix`: for every operation, each bad credential is refused and each good one works alone.

Refused (401 or 403): no credentials, a wrong API key, and malformed, garbage, `alg: none`, wrongly
signed, expired and HS256-confused tokens (on the gateway also the API key alone). Accepted (anything
but 401 and 403): the API key alone and the bearer token alone, where given.

The requests cannot change anything even where auth is broken: items are addressed by identifiers that
do not exist, and write bodies are empty objects, which no correct service accepts.
"""

from __future__ import annotations

from typing import Any

from contract_tests.judge.domain.data import Context
from contract_tests.judge.domain.http import Session
from contract_tests.spec import Operation

CHECK = "auth_matrix"
REFUSALS = (401, 403)


def harmless_call(ctx: Context, op: Operation) -> tuple[dict[str, Any], dict[str, Any]]:
    """Path parameters of missing items, and an empty body for operations that take one."""
    params = {}
    for name in op.path_parameters:
        collection = next(c for c in ctx.spec.collections if c.identifier == name)
        params[name] = ctx.missing_identifier(collection)
    content: dict[str, Any] = {"json": {}} if op.request_schema is not None else {}
    return params, content


def run(ctx: Context, session: Session) -> None:
    surface = session.surface
    for op_id in surface.operations:
        op = ctx.spec.operations[op_id]
        if not ctx.selected(op) or not ctx.operation_is_mine(op):
            continue
        params, content = harmless_call(ctx, op)
        for name, headers in surface.refused.items():
            exchange = session.call(op, params, headers=headers, **content)
            broken = None if exchange.status in REFUSALS else f"{name}: answered {exchange.status}, not 401 or 403"
            session.judge(CHECK, op, exchange, broken)
        for name, headers in surface.accepted.items():
            exchange = session.call(op, params, headers=headers, **content)
            broken = f"{name} alone was refused ({exchange.status})" if exchange.status in REFUSALS else None
            session.judge(CHECK, op, exchange, broken)
