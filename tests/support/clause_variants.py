"""Broken variants for issue 40: one per judged clause of the spec's decisions that had none, each breaking
that clause and nothing else, and a near miss of the realm's token accepted.

Built as `variants.py` builds its own (a fresh mock, one store method replaced on that instance or one
ASGI wrapper around it; the mock's code is never touched). `strict` ones break a clause only a strict
check judges, so their catch runs with `--strict`.
"""

from __future__ import annotations

import json
import re
from decimal import Decimal, InvalidOperation
from typing import Any
from urllib.parse import parse_qs, parse_qsl, urlencode

from mock_server.app import create_app
from mock_server.settings import Settings
from tests.support.faults import Answer, Scope, answer_of, edit_json, header, send_answer, whole_body, with_body
from tests.support.read_back_variants import CUSTOMER_WRITES, stored_otherwise
from tests.support.shape_variants import SHAPE_VARIANTS
from tests.support.variants import API, CUSTOMER, LINE, Variant, fault, null_text_as_null_in, with_store

LINES = f"{API}/productlines/"
PRODUCTS = f"{API}/products/"
GATEWAY = "/customers/v1/"
TOKEN_PATH = "/realms/shop/protocol/openid-connect/token"
PROBLEM = {"content-type": "application/problem+json"}


def error_as_a_list(scope: Scope, answer: Answer) -> Answer:
    """An error handler answering a bare JSON list of messages (no object, so no Problem)."""
    if answer[0] < 400:
        return answer
    return answer[0], {"content-type": "application/json"}, b'["Not found."]'


def conflict_as_400(scope: Scope, answer: Answer) -> Answer:
    """A 409 answered as 400 (a unique validator's refusal), with DRF's field-error body."""
    if answer[0] != 409:
        return answer
    return 400, {"content-type": "application/json"}, b'{"productline": ["already exists."]}'


def delete_takes_payments_first(store: Any) -> None:
    """A DELETE of a customer that removes its payments before the orders' foreign key refuses it (no
    transaction around the cascade): the 409 is answered, the payments are gone."""
    delete, owned = store.delete, store.owned

    def cascading(collection: str, key: Any) -> None:
        if collection == "customers":
            _, payments = owned("payments", "customernumber", key, 0, store.count("payments"))
            field = store.tables["payments"].key_field
            for payment in payments:
                delete("payments", payment[field])
        delete(collection, key)

    store.delete = cascading


def links_without_page_size(body: Any) -> Any:
    """`next` and `previous` built from `page` alone: the page size asked for is dropped."""
    for which in ("next", "previous"):
        if body[which]:
            path, _, query = body[which].partition("?")
            kept = "&".join(part for part in query.split("&") if not part.startswith("page_size="))
            body[which] = f"{path}?{kept}" if kept else path
    return body


def credit_limit_in_whole_units(collection: str, name: str, value: Any) -> Any:
    """`creditlimit` in a `DECIMAL(10,0)` column: the fraction is cut, the answer of the write shows it."""
    if collection != "customers" or name != "creditlimit" or not isinstance(value, str):
        return value
    try:
        return f"{Decimal(value).quantize(Decimal(1), rounding='ROUND_DOWN')}.00"
    except InvalidOperation:
        return value


def saturate_stock(scope: Scope, body: bytes) -> bytes:
    """A JSON body's `quantityinstock` above its column's maximum saturated at 32767, as MySQL does outside
    strict mode, instead of refused."""
    if not header(scope, "content-type").startswith("application/json"):
        return body
    data = json.loads(body)
    if isinstance(data, dict) and isinstance(data.get("quantityinstock"), int) and data["quantityinstock"] > 32767:
        data["quantityinstock"] = 32767
    return json.dumps(data).encode()


def money_without_digit_as_zero(scope: Scope, body: bytes) -> bytes:
    """A decimal parser reading a money value without a digit (`"-"`, `"."`) as zero."""
    if not header(scope, "content-type").startswith("application/json"):
        return body
    data = json.loads(body)
    if isinstance(data, dict):
        for name in ("buyprice", "msrp"):
            value = data.get(name)
            if isinstance(value, str) and not any(char.isdigit() for char in value):
                data[name] = "0"
    return json.dumps(data).encode()


class RefusingSalesReps:
    """A backend that does not know the sales representatives the target serves: a customer naming one is
    refused with 400 naming `salesrepemployeenumber` (no employee table of its own)."""

    def __init__(self) -> None:
        self.app = create_app(Settings())

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"] != f"{API}/customers/":
            await self.app(scope, receive, send)
            return
        body = await whole_body(receive)
        if b'"salesrepemployeenumber": null' not in body and b'"salesrepemployeenumber"' in body:
            problem = {"status": 400, "errors": [{"field": "salesrepemployeenumber", "message": "unknown"}]}
            await send_answer(send, (400, PROBLEM, json.dumps(problem).encode()))
            return
        sent = False

        async def replay() -> dict[str, Any]:
            nonlocal sent
            if sent:
                return {"type": "http.disconnect"}
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)


class GatewayTakingTheApiKey:
    """A gateway that forwards a request carrying only an API key to the backend's mount point, where the
    key is valid: the gateway's bearer-only rule is lost."""

    def __init__(self) -> None:
        self.app = create_app(Settings())

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        gateway = scope["type"] == "http" and scope["path"].startswith(GATEWAY)
        if gateway and header(scope, "x-api-key") and not header(scope, "authorization"):
            path = API + "/" + scope["path"].removeprefix(GATEWAY)
            scope = {**scope, "path": path, "raw_path": API.encode() + b"/" + scope["raw_path"][len(GATEWAY) :]}
        await self.app(scope, receive, send)


class TokenCacheByClaims:
    """A token cache keyed by a token's header and claims, not its signature: once the realm has issued a
    token, the same claims under any signature (one character changed, one short) pass as that token."""

    def __init__(self) -> None:
        self.app = create_app(Settings())
        self.issued: dict[str, str] = {}

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if scope["path"] == TOKEN_PATH:
            answer = await answer_of(self.app, scope, receive)
            if answer[0] == 200:
                token = str(json.loads(answer[2]).get("access_token", ""))
                self.issued[token.rpartition(".")[0]] = token
            await send_answer(send, answer)
            return
        sent = header(scope, "authorization").removeprefix("Bearer ")
        known = self.issued.get(sent.rpartition(".")[0])
        if known is not None and sent != known:
            headers = [(k, v) for k, v in scope["headers"] if k.lower() != b"authorization"]
            scope = {**scope, "headers": [*headers, (b"authorization", f"Bearer {known}".encode())]}
        await self.app(scope, receive, send)


CLAUSE_VARIANTS = [
    Variant(
        "error_body_outside_problem_schema",
        "response_schema_conformance",
        ("get_product_line",),
        "conformance",
        fault("GET", LINE, response=error_as_a_list),
        clauses=("error-body/problem-schema",),
    ),
    Variant(
        "duplicate_refused_with_400",
        "duplicate_is_conflict",
        ("create_product_line",),
        "domain",
        fault("POST", LINES, response=conflict_as_400),
        clauses=("duplicate-identifier/conflict",),
        strict=True,
    ),
    Variant(
        "rename_refused_with_400",
        "identifier_change_is_conflict",
        ("update_product_line",),
        "domain",
        fault("PUT", LINE, response=conflict_as_400),
        clauses=("identifier-change/conflict",),
        strict=True,
    ),
    Variant(
        "refused_delete_removes_payments",
        "referential_rules",
        ("delete_customer",),
        "domain",
        with_store(delete_takes_payments_first),
        clauses=("delete-with-dependants/nothing-deleted",),
    ),
    Variant(
        "links_drop_page_size",
        "pagination_walk",
        ("list_product_lines",),
        "domain",
        fault("GET", LINES, response=edit_json(links_without_page_size)),
        clauses=("page-links/keep-page-size",),
    ),
    Variant(
        "credit_limit_stored_in_whole_units",
        "read_back_identical",
        CUSTOMER_WRITES,
        "domain",
        with_store(stored_otherwise(credit_limit_in_whole_units)),
        clauses=("decimals/by-value",),
    ),
    Variant(
        "stock_above_maximum_saturated",
        "invalid_values_rejected",
        ("create_product",),
        "domain",
        fault("POST", f"{API}/products/", request=saturate_stock),
        clauses=("integers-out-of-bounds/query-and-body",),
    ),
    Variant(
        "money_without_a_digit_read_as_zero",
        "invalid_values_rejected",
        ("create_product",),
        "domain",
        fault("POST", f"{API}/products/", request=money_without_digit_as_zero),
        clauses=("money-pattern/not-a-number-refused",),
    ),
    Variant(
        "known_sales_rep_refused",
        "external_reference_accepted",
        ("create_customer",),
        "conformance",
        RefusingSalesReps,
        clauses=("external-references/accepted",),
        strict=True,
    ),
    Variant(
        "gateway_takes_the_api_key",
        "auth_matrix",
        ("get_customer",),
        "domain",
        GatewayTakingTheApiKey,
        gateway=True,
        clauses=("gateway/bearer-only",),
    ),
    Variant(
        "token_signature_not_checked_once_issued",
        "auth_matrix",
        ("get_customer",),
        "domain",
        TokenCacheByClaims,
        clauses=("credentials/invalid",),
    ),
]
"""Each caught by its check at one seed, restricted to its operations and phase, as `VARIANTS` are
(tests/e2e/test_broken_variants.py)."""


def default_page_of_ten(scope: Scope, body: bytes) -> bytes:
    """A list without `page_size` served ten to a page (a settings file's PAGE_SIZE), not the spec's 20."""
    if b"page_size=" not in scope["query_string"]:
        query = scope["query_string"]
        scope["query_string"] = query + (b"&" if query else b"") + b"page_size=10"
    return body


def refuse_large_pages(scope: Scope, answer: Answer) -> Answer:
    """A `page_size` above 100 refused with 400 (a `max_value` validator), not clamped."""
    sizes = parse_qs(scope["query_string"].decode()).get("page_size", ["0"])
    if not sizes[-1].isdigit() or int(sizes[-1]) <= 100:
        return answer
    return 400, PROBLEM, b'{"status": 400, "errors": [{"field": "page_size", "message": "at most 100"}]}'


CLAUSE_VARIANTS += [
    Variant(
        "default_page_size_ten",
        "pagination_walk",
        ("list_products",),
        "domain",
        fault("GET", PRODUCTS, request=default_page_of_ten),
        clauses=("page-size/default",),
    ),
    Variant(
        "page_size_above_maximum_refused",
        "pagination_walk",
        ("list_products",),
        "domain",
        fault("GET", PRODUCTS, response=refuse_large_pages),
        clauses=("page-size/clamped",),
    ),
]


def overflow_error(scope: Scope, answer: Answer) -> Answer:
    """The database driver's overflow on a path integer past int64, answered as an HTML 500."""
    if int(scope["path"].rstrip("/").rpartition("/")[2]) < 2**63:
        return answer
    return 500, {"content-type": "text/html"}, b"<h1>OverflowError: int too big to convert</h1>"


CLAUSE_VARIANTS.append(
    Variant(
        "path_integer_past_int64_is_500",
        "identifier_addressable",
        ("create_customer",),
        "domain",
        fault("GET", rf"{API}/customers/\d+/", response=overflow_error),
        clauses=("integers-out-of-bounds/path",),
    )
)


class LastPageForAnyPastIt:
    """A paginator serving its last page for any page past it (Django's `Paginator.get_page`), not a 404."""

    def __init__(self) -> None:
        self.app = create_app(Settings())

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "GET" or scope["path"] != LINES:
            await self.app(scope, receive, send)
            return
        answer = await answer_of(self.app, scope, receive)
        query = parse_qs(scope["query_string"].decode())
        if answer[0] == 404 and "page" in query:
            first = json.loads((await answer_of(self.app, *with_body(_on_page(scope, 1), b"")))[2])
            shown = len(first["results"]) or 1
            answer = await answer_of(self.app, *with_body(_on_page(scope, max(1, -(-first["count"] // shown))), b""))
        await send_answer(send, answer)


def _on_page(scope: Scope, page: int) -> Scope:
    pairs = [(name, value) for name, value in parse_qsl(scope["query_string"].decode()) if name != "page"]
    return {**scope, "query_string": urlencode([*pairs, ("page", str(page))]).encode()}


def refuse_an_empty_first_page(scope: Scope, answer: Answer) -> Answer:
    """An empty list answered 404 "Invalid page." (Django's `Paginator(allow_empty_first_page=False)`)."""
    if answer[0] != 200 or json.loads(answer[2]).get("count") != 0:
        return answer
    return 404, PROBLEM, b'{"status": 404, "detail": "Invalid page."}'


def join_repeated_fields(scope: Scope, body: bytes) -> bytes:
    """A form parser joining the values of a field sent more than once (`a,b`), as a handler that reads
    a list of values as one text does."""
    if not header(scope, "content-type").startswith("application/x-www-form-urlencoded"):
        return body
    joined: dict[str, list[str]] = {}
    for name, value in parse_qsl(body.decode(), keep_blank_values=True):
        joined.setdefault(name, []).append(value)
    return urlencode({name: ",".join(values) for name, values in joined.items()}).encode()


class EchoingUnknownFields:
    """A PATCH of a customer that answers the request's fields the item lacks beside it (a view returning
    `{**request.data, **serializer.data}`): an unknown field sent comes back as if stored."""

    def __init__(self) -> None:
        self.app = create_app(Settings())

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "PATCH" or not re.fullmatch(CUSTOMER, scope["path"]):
            await self.app(scope, receive, send)
            return
        body = await whole_body(receive)
        scope, replay = with_body(scope, body)
        status, headers, answered = await answer_of(self.app, scope, replay)
        if status == 200:
            kind = header(scope, "content-type")
            sent = json.loads(body) if kind.startswith("application/json") else dict(parse_qsl(body.decode()))
            item = json.loads(answered)
            unknown = {name: value for name, value in sent.items() if name not in item}
            answered = json.dumps({**item, **unknown}).encode()
        await send_answer(send, (status, headers, answered))


def default_for_a_left_out_limit(scope: Scope, body: bytes) -> bytes:
    """A PUT that makes the row again (a delete and an insert), so a credit limit it leaves out takes the
    model's default, 0.00, instead of null or the value it had."""
    if not header(scope, "content-type").startswith("application/json"):
        return body
    sent = json.loads(body)
    return body if "creditlimit" in sent else json.dumps({**sent, "creditlimit": "0.00"}).encode()


class WritesLookUpTheText:
    """Reads of a customer find it by the number its path reads as (`0103` is 103), while a replace, a
    patch or a delete looks the path's text up as written and finds nothing: one spelling, two answers."""

    def __init__(self) -> None:
        self.app = create_app(Settings())

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        number = re.fullmatch(rf"{API}/customers/([^/]+)/", scope.get("path", ""))
        if scope["type"] == "http" and scope["method"] != "GET" and number and _another_spelling(number[1]):
            await send_answer(send, (404, PROBLEM, b'{"status": 404, "detail": "Not found."}'))
            return
        await self.app(scope, receive, send)


def _another_spelling(text: str) -> bool:
    """Whether `text` reads as a number it does not spell as Python writes it (`0103`, `+103`)."""
    try:
        return str(int(text)) != text
    except ValueError:
        return False


CLAUSE_VARIANTS += [
    Variant(
        "form_null_number_stored_as_null",
        "patch_locality",
        ("patch_customer",),
        "domain",
        fault("PATCH", CUSTOMER, request=null_text_as_null_in(("integer", "number"))),
        clauses=("form-text/number-text",),
    ),
    Variant(
        "page_past_the_end_serves_the_last",
        "pagination_walk",
        ("list_product_lines",),
        "domain",
        LastPageForAnyPastIt,
        clauses=("page-past-the-end/past-the-end",),
    ),
    Variant(
        "empty_first_page_refused",
        "unknown_not_found",
        ("get_product_line_products",),
        "domain",
        fault("GET", rf"{LINES}[^/]+/products/", response=refuse_an_empty_first_page),
        clauses=("page-past-the-end/empty-first-page",),
    ),
    Variant(
        "repeated_form_field_joined",
        "patch_locality",
        ("patch_customer",),
        "domain",
        fault("PATCH", CUSTOMER, request=join_repeated_fields),
        clauses=("repeated-field/last-value",),
    ),
    Variant(
        "unknown_field_answered_back",
        "patch_locality",
        ("patch_customer",),
        "domain",
        EchoingUnknownFields,
        clauses=("unknown-fields-ignored/ignored",),
    ),
    Variant(
        "put_left_out_limit_defaulted",
        "round_trip",
        ("create_customer", "get_customer", "update_customer", "patch_customer", "delete_customer"),
        "domain",
        fault("PUT", CUSTOMER, request=default_for_a_left_out_limit),
        clauses=("put-replaces/omitted-reset",),
    ),
    Variant(
        "number_spelling_found_by_reads_only",
        "identifier_variants",
        ("create_customer", "get_customer"),
        "domain",
        WritesLookUpTheText,
        clauses=("integer-identifiers/alike",),
    ),
]
"""Issue 40's last clauses, each broken once: a form's text `null` in a nullable number stored as null
(the sales representative's number, which must be refused with 400), a paginator's last page served
past it, an empty first page refused, a repeated form field joined, an unknown field answered back, a
left-out field defaulted, and a number's spelling found by reads only."""


CLAUSE_VARIANTS += SHAPE_VARIANTS
