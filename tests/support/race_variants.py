"""Broken variants of the mock that only concurrent writes show: one race each, on product lines.

Each wraps a fresh mock in a small ASGI middleware that does what an ORM-backed service does between
reading and writing a row, and yields there (`await asyncio.sleep`), so that a second request served
on the same event loop runs in the gap. A request alone behaves exactly as the mock does: the
sequential checks see nothing wrong.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Awaitable, Callable
from typing import Any

from mock_server.app import create_app
from mock_server.settings import Settings
from tests.support.faults import Answer, Scope, answer_of, send_answer, whole_body, with_body
from tests.support.variants import API, Variant

COLLECTION = "productlines"
LINES = re.compile(rf"{API}/productlines/(?:(?P<key>[^/]+)/)?")
PRODUCTS = re.compile(rf"{API}/products/")
LINE_PRODUCTS = re.compile(rf"{API}/productlines/(?P<key>[^/]+)/products/")
GAP = 0.01
"""Seconds between the read and the write: a query's round trip to a database."""

Handle = Callable[["Racy", Scope, str, bytes, Any], Awaitable[None]]


class Racy:
    """The mock, with `method` requests whose path `path` matches handled by `handle(racy, scope, key, body,
    send)` (`key`: the path's item, "" for a list); each route a (method, path, handle)."""

    def __init__(self, *routes: tuple[str, re.Pattern[str], Handle]) -> None:
        self.app = create_app(Settings())
        self.store = self.app.store
        self.routes = routes
        self.counts: dict[str, int] = {}

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        path = scope.get("path", "")
        for method, pattern, handle in self.routes:
            matched = pattern.fullmatch(path)
            if scope["type"] == "http" and scope["method"] == method and matched:
                body = await whole_body(receive)
                if body and not is_json(scope):
                    await self.forward(scope, body, send)  # a form body: the mock's own answer
                    return
                await handle(self, scope, matched.groupdict().get("key") or "", body, send)
                return
        await self.app(scope, receive, send)

    async def forward(self, scope: Scope, body: bytes, send: Any) -> Answer:
        """The mock's own answer to the request with `body`, captured and sent on."""
        answer = await self.captured(scope, body)
        await send_answer(send, answer)
        return answer

    async def captured(self, scope: Scope, body: bytes) -> Answer:
        return await answer_of(self.app, *with_body(scope, body))

    def row(self, key: str, collection: str = COLLECTION) -> dict[str, Any] | None:
        try:
            return dict(self.store.get(collection, key))
        except Exception:  # the mock's not-found error
            return None


def is_json(scope: Scope) -> bool:
    return any(k.lower() == b"content-type" and v.startswith(b"application/json") for k, v in scope["headers"])


async def whole_row_written_back(racy: Racy, scope: Scope, key: str, body: bytes, send: Any) -> None:
    """`serializer.save()` of a partial update: the row as read, with the changes, written back whole."""
    read = racy.row(key)
    await asyncio.sleep(GAP)
    if read is None or not body:
        await racy.forward(scope, body, send)
        return
    await racy.forward(scope, json.dumps({**read, **json.loads(body)}, default=str).encode(), send)


async def rolled_back_on_change(racy: Racy, scope: Scope, key: str, body: bytes, send: Any) -> None:
    """A botched optimistic lock: a PATCH that finds the row changed while it worked puts back the row
    it read, and still answers as if its change were made."""
    read = racy.row(key)
    await asyncio.sleep(GAP)
    now = racy.row(key)
    answer = await racy.captured(scope, body)
    if read is not None and now is not None and now != read:
        racy.store.update(COLLECTION, key, read)
    await send_answer(send, answer)


async def checked_then_inserted(racy: Racy, scope: Scope, key: str, body: bytes, send: Any) -> None:
    """Uniqueness checked by a SELECT before the INSERT: the second insert's IntegrityError is a 500."""
    try:
        wanted = json.loads(body).get("productline")
    except (ValueError, AttributeError):
        wanted = None
    existed = racy.row(wanted) is not None if isinstance(wanted, str) else True
    await asyncio.sleep(GAP)
    answer = await racy.captured(scope, body)
    if not existed and answer[0] == 409:
        answer = 500, {"content-type": "application/json"}, b'{"detail": "IntegrityError: UNIQUE constraint failed"}'
    await send_answer(send, answer)


async def upserted(racy: Racy, scope: Scope, key: str, body: bytes, send: Any) -> None:
    """A PATCH that saves the row it read: when a DELETE removed it meanwhile, the save inserts it again."""
    read = racy.row(key)
    await asyncio.sleep(GAP)
    if read is not None and racy.row(key) is None and body:
        racy.store.create(COLLECTION, {**read, **json.loads(body)})
    await racy.forward(scope, body, send)


def line_of(body: bytes) -> str | None:
    try:
        line = json.loads(body).get("productline")
    except (ValueError, AttributeError):
        return None
    return line if isinstance(line, str) else None


async def no_foreign_key(racy: Racy, scope: Scope, key: str, body: bytes, send: Any) -> None:
    """A create that checks its product line exists, then inserts with no foreign key constraint: a line
    deleted meanwhile leaves the new product naming nothing (answered 201 all the same)."""
    line = line_of(body)
    existed = line is not None and racy.row(line) is not None
    await asyncio.sleep(GAP)
    answer = await racy.captured(scope, body)
    if existed and answer[0] == 400:
        answer = 201, {"content-type": "application/json"}, body
    await send_answer(send, answer)


async def counted_beside_the_rows(racy: Racy, scope: Scope, key: str, body: bytes, send: Any) -> None:
    """A product line's count of products kept in a column of its own, incremented by a read-modify-write."""
    line = line_of(body)
    if line is None:
        await racy.forward(scope, body, send)
        return
    before = racy.counts.get(line, racy.store.owned("products", "productline", line, 0, 1)[0] if racy.row(line) else 0)
    await asyncio.sleep(GAP)
    answer = await racy.forward(scope, body, send)
    if answer[0] == 201:
        racy.counts[line] = before + 1


async def count_from_the_column(racy: Racy, scope: Scope, key: str, body: bytes, send: Any) -> None:
    status, headers, content = await racy.captured(scope, body)
    if status == 200 and key in racy.counts:
        page = json.loads(content)
        page["count"] = racy.counts[key]
        content = json.dumps(page).encode()
    await send_answer(send, (status, headers, content))


RACE_VARIANTS = [
    Variant(
        "patch_writes_the_whole_row",
        "concurrent_lost_update",
        ("patch_product_line",),
        "domain",
        lambda: Racy(("PATCH", LINES, whole_row_written_back)),
    ),
    Variant(
        "patch_rolls_back_on_change",
        "concurrent_same_field",
        ("patch_product_line",),
        "domain",
        lambda: Racy(("PATCH", LINES, rolled_back_on_change)),
    ),
    Variant(
        "create_checks_then_inserts",
        "concurrent_duplicate_create",
        ("create_product_line",),
        "domain",
        lambda: Racy(("POST", LINES, checked_then_inserted)),
    ),
    Variant(
        "patch_brings_a_deleted_item_back",
        "concurrent_write_delete",
        ("patch_product_line",),
        "domain",
        lambda: Racy(("PATCH", LINES, upserted)),
    ),
    Variant(
        "product_in_a_line_being_deleted",
        "concurrent_reference_delete",
        ("create_product",),
        "domain",
        lambda: Racy(("POST", PRODUCTS, no_foreign_key)),
    ),
    Variant(
        "product_count_kept_beside_the_rows",
        "concurrent_sub_list_count",
        ("get_product_line_products",),
        "domain",
        lambda: Racy(("POST", PRODUCTS, counted_beside_the_rows), ("GET", LINE_PRODUCTS, count_from_the_column)),
    ),
]
