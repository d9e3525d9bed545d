"""The items that own a sub-list, as a product line owns its products. One the target serves, else one made.

The checks that read sub-lists share it: pagination_walk, list_order, read_back_identical and
referential_rules. It says which owner to list under, and which collection a sub-list lists.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from contract_tests.judge.domain.data import Context
from contract_tests.judge.domain.http import Session
from contract_tests.spec import Collection, Operation

OWNER_CANDIDATES = 20
"""Owners looked at for one with at least two items."""


@dataclass(frozen=True)
class Made:
    """An owner the test created because the target had none, as an empty target has."""

    collection: Collection
    identifier: Any

    def delete(self, session: Session) -> None:
        session.call(self.collection.item_ops["delete"], {self.collection.identifier: self.identifier})


def owner(ctx: Context, session: Session, op: Operation) -> tuple[dict[str, Any] | None, Made | None]:
    """Path parameters naming an owner with at least two items, else the first owner, else one made now.

    They are {} for a top list, and None when there is no owner."""
    if not op.path_parameters:
        return {}, None
    (name,) = op.path_parameters
    collection = next(c for c in ctx.spec.collections if c.identifier == name)
    owners = session.call(collection.list_op, query={"page_size": OWNER_CANDIDATES}).json()
    candidates = [item[name] for item in (owners or {}).get("results", []) if isinstance(item, dict) and name in item]
    for candidate in candidates:
        page = session.call(op, {name: candidate}, query={"page_size": 1}).json()
        if isinstance(page, dict) and isinstance(page.get("count"), int) and page["count"] >= 2:
            return {name: candidate}, None
    if candidates:
        return {name: candidates[0]}, None
    if not session.serves(collection.create):
        return None, None
    identifier = ctx.fresh_identifier(collection)
    created = session.call(collection.create, json=ctx.valid_body(collection, identifier))
    return ({name: identifier}, Made(collection, identifier)) if created.status == 201 else (None, None)


def dependant_collection(ctx: Context, owner: Collection, sub_list: Operation) -> Collection | None:
    """The collection whose items `sub_list` lists, when the client creates them. Its items name `owner`."""
    return next(
        (
            child
            for child in ctx.spec.collections
            if ctx.spec.references(child.create).get(owner.identifier) is owner
            and sub_list.path.startswith(owner.create.path)
            and sub_list.path.rstrip("/").endswith(child.create.path.strip("/").rsplit("/", 1)[-1])
        ),
        None,
    )
