"""`surface_parity`: the gateway and the backend answer the same representation of the same data.

Every read the gateway serves is sent to both surfaces, with owners taken from the first page of their
list. The bodies must be equal, except the pagination links. Each link must stay on the surface that
was called.
"""

from __future__ import annotations

from typing import Any

from contract_tests.judge.domain.data import Context
from contract_tests.judge.domain.http import Exchange, Session
from contract_tests.spec import Operation

CHECK = "surface_parity"
LINKS = ("next", "previous")
PAGE = {"page_size": 1}


def run(ctx: Context, backend: Session, gateway: Session) -> None:
    for op in ctx.spec.gateway_operations:
        if op.method == "get" and ctx.selected(op) and ctx.operation_is_mine(op) and gateway.serves(op):
            params = owner_params(ctx, gateway, op)
            if params is None:
                reason = "the owner's list is empty on the target: no item to compare"
                gateway.ledger.skipped(gateway.surface.name, op.id, CHECK, reason)
            else:
                compare(backend, gateway, op, params, PAGE if ctx.spec.is_list(op) else None)


def owner_params(ctx: Context, session: Session, op: Operation) -> dict[str, Any] | None:
    """The first listed owner for each path parameter, or {} for none. None when the list is empty."""
    params = {}
    for name in op.path_parameters:
        collection = next(c for c in ctx.spec.collections if c.identifier == name)
        page = session.call(collection.list_op).json()
        results = page.get("results") if isinstance(page, dict) else None
        if not results:
            return None
        params[name] = results[0][name]
    return params


def link_problem(exchange: Exchange, session: Session) -> str | None:
    body = exchange.json()
    for which in LINKS:
        link = body.get(which) if isinstance(body, dict) else None
        if link is not None and not str(link).startswith(session.surface.base_url.rstrip("/") + "/"):
            return f"`{which}` on the {session.surface.name} leads off it: {link}"
    return None


def compare(backend: Session, gateway: Session, op: Operation, params: dict[str, Any], query: Any) -> None:
    on_backend = backend.call(op, params, query=query)
    on_gateway = gateway.call(op, params, query=query)
    broken = link_problem(on_gateway, gateway) or link_problem(on_backend, backend)
    if broken is None and on_backend.status != on_gateway.status:
        broken = f"the backend answered {on_backend.status}, the gateway {on_gateway.status}"
    if broken is None:
        mine, theirs = without_links(on_gateway.json()), without_links(on_backend.json())
        broken = None if mine == theirs else "the gateway's representation differs from the backend's"
    gateway.judge(CHECK, op, on_gateway, broken)


def without_links(body: Any) -> Any:
    return {k: v for k, v in body.items() if k not in LINKS} if isinstance(body, dict) else body
