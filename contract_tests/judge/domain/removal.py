"""`deleted_everywhere`: a deleted item is gone from its URL, from every list that showed it, and every
sub-list it owned is 404.

Called on the items `fidelity` wrote, with the pages that showed them: after the DELETE, a read of
the item is 404, each of those pages read again (the same URL) no longer holds it (or is past the end
now, 404), and each sub-list of the item (the create operation's links to lists, such as a product
line's products) answers 404 (the spec's `unknown-resource`), not an empty page.
"""

from __future__ import annotations

from typing import Any

from contract_tests.judge.domain.http import Exchange, Session
from contract_tests.judge.domain.placement import Placement, find, results
from contract_tests.spec import Collection

CHECK = "deleted_everywhere"


def delete(
    session: Session, collection: Collection, identifier: Any, shown: list[Placement], setup: list[Exchange]
) -> None:
    name = collection.identifier
    params = {name: identifier}
    deleted = session.call(collection.item_ops["delete"], params)
    if not session.judge(CHECK, collection.item_ops["delete"], deleted, refused(deleted), setup):
        return
    after = [*setup, deleted]
    read = session.call(collection.item_ops["get"], params)
    broken = None if read.status == 404 else f"a read of the deleted {name}={identifier!r} answered {read.status}"
    session.judge(CHECK, collection.item_ops["get"], read, broken, after)
    for placed in shown:
        again = session.call(placed.op, url=str(placed.exchange.request.url))
        still = find(results(again) or [], name, identifier) if again.status != 404 else None
        broken = None if still is None else f"the deleted {name}={identifier!r} is still listed"
        if again.status not in (200, 404):
            broken = f"the page that showed the deleted {name}={identifier!r} answered {again.status}"
        session.judge(CHECK, placed.op, again, broken, after)
    for sub_list in collection.sub_lists:
        if sub_list.id in session.surface.operations:
            owned = session.call(sub_list, params)
            broken = f"{sub_list.id} of the deleted {name}={identifier!r} answered {owned.status}, not 404"
            session.judge(CHECK, sub_list, owned, None if owned.status == 404 else broken, after)


def refused(deleted: Exchange) -> str | None:
    return None if deleted.status in (200, 202, 204) else f"the DELETE answered {deleted.status}"
