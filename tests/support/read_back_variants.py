"""Broken variants for issue 28: data that comes back other than it was written, wherever it is shown.

Two or more per property, each a defect of a different place (storage, cache, view, parser, router),
as a service on a real database has them; each must be caught by the check named, in every run.
They are built as `variants.py` builds its own: a fresh mock, one store method replaced on that
instance or one ASGI wrapper around it; the mock's code is never touched.
"""

from __future__ import annotations

import json
import random
import re
import unicodedata
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl, quote, unquote, urlencode

from mock_server.app import create_app
from mock_server.settings import Settings
from mock_server.state.store import NotFound
from tests.support.faults import Answer, Scope, answer_of, edit_json, header, send_answer
from tests.support.variants import API, Variant, case_folded, fault, with_store

LINES = f"{API}/productlines/"
CUSTOMERS = f"{API}/customers/"


class ListCache:
    """A cache of list pages in front of the mock, by URL, emptied by the writes in `emptied_by` only."""

    def __init__(self, lists: str, emptied_by: tuple[str, ...]) -> None:
        self.app = create_app(Settings())
        self.lists = lists
        self.emptied_by = emptied_by
        self.pages: dict[tuple[str, bytes], Answer] = {}

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or not scope["path"].startswith(self.lists):
            await self.app(scope, receive, send)
            return
        if scope["method"] in self.emptied_by:
            self.pages.clear()
        key = (scope["path"], scope["query_string"])
        if scope["method"] != "GET" or scope["path"] != self.lists:
            await self.app(scope, receive, send)
            return
        if key not in self.pages:
            self.pages[key] = await answer_of(self.app, scope, receive)
        await send_answer(send, self.pages[key])


def stored_otherwise(change: Callable[[str, str, Any], Any]) -> Callable[[Any], None]:
    """A store that keeps `change(collection, field, value)` of each value written, while the write's
    answer, built from the object in memory, shows what was sent."""

    def patch(store: Any) -> None:
        create, update = store.create, store.update

        def changed(collection: str, record: dict[str, Any]) -> dict[str, Any]:
            return {name: change(collection, name, value) for name, value in record.items()}

        def create_changed(collection: str, record: dict[str, Any]) -> Any:
            return {**create(collection, changed(collection, record)), **record}

        def update_changed(collection: str, key: Any, changes: dict[str, Any]) -> Any:
            return {**update(collection, key, changed(collection, changes)), **changes}

        store.create, store.update = create_changed, update_changed

    return patch


def outside_bmp_as_question_marks(collection: str, name: str, value: Any) -> Any:
    """A MySQL `utf8` (three-byte) column: a character outside the BMP is stored as '?'."""
    return re.sub("[\U00010000-\U0010ffff]", "?", value) if isinstance(value, str) else value


def short_address_column(collection: str, name: str, value: Any) -> Any:
    """`addressline1` in a column of 40 characters (the spec allows 50), cut in a non-strict mode."""
    return value[:40] if collection == "customers" and name == "addressline1" and isinstance(value, str) else value


def form_as_latin1(scope: Scope, body: bytes) -> bytes:
    """A form parser that reads percent-decoded bytes as Latin-1: non-ASCII text is stored garbled."""
    if not header(scope, "content-type").startswith("application/x-www-form-urlencoded"):
        return body
    fields = parse_qsl(body.decode("ascii"), keep_blank_values=True, encoding="latin-1")
    return urlencode(fields, encoding="utf-8").encode()


def form_patch_blanks_unsent(scope: Scope, body: bytes) -> bytes:
    """A form PATCH handled as a whole form: a nullable field the body leaves out is sent as empty."""
    if not header(scope, "content-type").startswith("application/x-www-form-urlencoded"):
        return body
    fields = dict(parse_qsl(body.decode(), keep_blank_values=True))
    for name in ("textdescription", "htmldescription"):
        fields.setdefault(name, "")
    return urlencode(fields).encode()


def soft_delete(store: Any) -> None:
    """A DELETE that only marks the row: a read hides it, the lists still show it."""
    delete, create, get = store.delete, store.create, store.get
    deleted: set[tuple[str, Any]] = set()

    def mark(collection: str, key: Any) -> None:
        record = get(collection, key)
        delete(collection, key)  # the rules (dependants) as before
        create(collection, record)
        deleted.add((collection, key))

    def get_unmarked(collection: str, key: Any) -> Any:
        if (collection, key) in deleted:
            raise NotFound(collection, key)
        return get(collection, key)

    store.delete, store.get = mark, get_unmarked


def empty_page_for_unknown_owner(scope: Scope, answer: Answer) -> Answer:
    """A sub-list filtered by owner without looking the owner up: an unknown one gets an empty page."""
    if answer[0] != 404:
        return answer
    body = {"count": 0, "next": None, "previous": None, "results": []}
    return 200, {"content-type": "application/json"}, json.dumps(body).encode()


def put_creates(store: Any) -> None:
    """An update that saves whatever it is given: a PUT or PATCH to a missing item creates it."""
    update, create = store.update, store.create

    def upsert(collection: str, key: Any, changes: dict[str, Any]) -> Any:
        if key in store.tables[collection].rows:
            return update(collection, key, changes)
        field = store.tables[collection].key_field
        return create(collection, {**dict.fromkeys(store.tables[collection].fields), **changes, field: key})

    store.update = upsert


def shuffled(body: Any) -> Any:
    """A page in whatever order the database returns its rows (no ORDER BY): never the sorted one."""
    items = body["results"]
    if len(items) > 1:
        order = list(items)
        while order == items:
            random.shuffle(order)
        body["results"] = order
    return body


def descending(store: Any) -> None:
    """Product lines ordered by their key descending (`ORDER BY productline DESC`)."""
    counted_page = store.counted_page

    def reversed_page(collection: str, offset: int, limit: int) -> tuple[int, list[Any]]:
        if collection != "productlines":
            return counted_page(collection, offset, limit)
        count, records = counted_page(collection, 0, store.count(collection))
        return count, records[::-1][offset : offset + limit]

    store.counted_page = reversed_page


class NfcPaths:
    """A router that normalises the path to NFC before matching: an identifier in NFD reads another item."""

    def __init__(self) -> None:
        self.app = create_app(Settings())

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            segments = scope["raw_path"].decode("ascii").split("/")
            normal = [quote(unicodedata.normalize("NFC", unquote(segment)), safe="") for segment in segments]
            scope["raw_path"] = "/".join(normal).encode("ascii")
            scope["path"] = unicodedata.normalize("NFC", scope["path"])
        await self.app(scope, receive, send)


class UpperHexOnly:
    """A router matching percent-escapes byte for byte: a path whose escapes are in lower-case hex
    (`%c3%a9`, the same identifier as `%C3%A9`) names no item."""

    def __init__(self) -> None:
        self.app = create_app(Settings())

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and re.search(rb"%(?:[a-f][0-9a-fA-F]|[0-9A-F][a-f])", scope["raw_path"]):
            await send_answer(send, (404, {"content-type": "application/problem+json"}, b'{"status": 404}'))
            return
        await self.app(scope, receive, send)


CUSTOMER_WRITES = ("create_customer", "update_customer", "patch_customer")
LINE_WRITES = ("create_product_line", "update_product_line", "patch_product_line")

READ_BACK_VARIANTS = [
    # what is written reads back identical (read_back_identical)
    Variant(
        "list_cached_across_updates",
        "read_back_identical",
        LINE_WRITES,
        "domain",
        lambda: ListCache(LINES, emptied_by=("POST", "DELETE")),
        clauses=("read-back/every-list",),
    ),
    Variant(
        "form_patch_blanks_unsent_fields",
        "read_back_identical",
        LINE_WRITES,
        "domain",
        fault("PATCH", f"{LINES}[^/]+/", request=form_patch_blanks_unsent),
        clauses=("patch-changes-what-it-sends/others-kept",),
    ),
    # values from the whole range (read_back_identical)
    Variant(
        "outside_bmp_stored_as_question_marks",
        "read_back_identical",
        LINE_WRITES,
        "domain",
        with_store(stored_otherwise(outside_bmp_as_question_marks)),
        clauses=("read-back/whole-range", "trimmed-text/nothing-else"),
    ),
    Variant(
        "address_column_shorter_than_its_bound",
        "read_back_identical",
        CUSTOMER_WRITES,
        "domain",
        with_store(stored_otherwise(short_address_column)),
        clauses=("read-back/whole-range",),
    ),
    Variant(
        "form_text_decoded_as_latin1",
        "read_back_identical",
        CUSTOMER_WRITES,
        "domain",
        fault("POST", CUSTOMERS, request=form_as_latin1),
        clauses=("read-back/whole-range",),
    ),
    # a deleted item is gone everywhere (deleted_everywhere)
    Variant(
        "soft_deleted_still_listed",
        "deleted_everywhere",
        LINE_WRITES,
        "domain",
        with_store(soft_delete),
        clauses=("read-back/deleted-gone",),
    ),
    Variant(
        "list_cache_not_emptied_by_delete",
        "deleted_everywhere",
        CUSTOMER_WRITES,
        "domain",
        lambda: ListCache(CUSTOMERS, emptied_by=("POST", "PUT", "PATCH")),
        clauses=("read-back/deleted-gone",),
    ),
    # what does not exist is 404 (unknown_not_found)
    Variant(
        "sub_list_of_unknown_owner_is_empty",
        "unknown_not_found",
        ("get_customer_orders",),
        "domain",
        fault("GET", rf"{CUSTOMERS}-?\d+/orders/", response=empty_page_for_unknown_owner),
        clauses=("unknown-resource/unknown-owner",),
    ),
    Variant(
        "put_to_missing_item_creates",
        "unknown_not_found",
        ("update_product",),
        "domain",
        with_store(put_creates),
        clauses=("put-never-creates/missing-is-404",),
    ),
    # the documented order, stable (list_order)
    Variant(
        "unstable_list_order",
        "list_order",
        ("list_product_lines",),
        "domain",
        fault("GET", LINES, response=edit_json(shuffled)),
        clauses=("list-order/stable",),
    ),
    Variant(
        "list_order_descending",
        "list_order",
        ("list_product_lines",),
        "domain",
        with_store(descending),
        clauses=("list-order/ascending",),
    ),
    # identifiers as the decisions table says (identifier_variants)
    Variant(
        "case_ignored_by_lookups_only",
        "identifier_variants",
        ("create_product_line", "get_product_line"),
        "domain",
        with_store(case_folded(lookups=True, creates=False)),
        clauses=("identifiers-exact/case-consistent",),
    ),
    Variant(
        "case_ignored_by_creates_only",
        "identifier_variants",
        ("create_product", "get_product"),
        "domain",
        with_store(case_folded(lookups=False, creates=True)),
        clauses=("identifiers-exact/case-consistent",),
    ),
    Variant(
        "percent_escapes_in_lower_hex_unknown",
        "identifier_variants",
        ("create_product_line", "get_product_line"),
        "domain",
        UpperHexOnly,
        clauses=("identifiers-exact/percent-encoding",),
    ),
    Variant(
        "paths_normalised_to_nfc",
        "identifier_variants",
        ("create_product", "get_product"),
        "domain",
        NfcPaths,
        clauses=("identifiers-exact/no-normalisation",),
    ),
]
