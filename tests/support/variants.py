"""Deliberately broken variants of the mock: one defect each, and the check that must catch it.

Each is a fresh `create_app(Settings())`, wrapped in a `Fault` middleware or with one store method
replaced on that instance; the mock's code is never touched. `include` keeps each run to the
operations the defect concerns; `phases` says which part of the suite proves the detection.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from mock_server.app import create_app
from mock_server.settings import DEFAULT_API_KEY, Settings
from mock_server.state.store import duplicate
from tests.support.faults import Answer, Fault, Scope, edit_json, header
from tests.support.suite import credentials

API = "/shop/api/v1"
SEGMENT = r"[^/]+"
SEED = 7
"""The seed of the run that catches each variant."""


@dataclass(frozen=True)
class Variant:
    name: str
    check: str
    include: tuple[str, ...]
    phases: str  # "domain" (--no-conformance) or "conformance" (--no-domain)
    build: Callable[[], Any]
    gateway: bool = False
    clauses: tuple[str, ...] = ()
    """The clauses of the spec's decisions it breaks (`decision/clause`, as docs/decisions.md lists them)."""
    strict: bool = False
    """Whether its catch runs with `--strict`: the clause it breaks is judged by a strict check only."""

    def __str__(self) -> str:
        return self.name

    def run_args(self, origin: str, seed: int | None = SEED) -> list[str]:
        """The suite's arguments for the run that catches this variant served at `origin`: `seed` (None: the
        one the run derives), its operations, and the part of the suite that proves it.
        test_broken_variants.py and the unsharded run of test_sharding.py make this one run."""
        seeded = ["--seed", str(seed)] if seed is not None else []
        args = ["--base-url", f"{origin}/shop/api/v1", *credentials(origin), *seeded, "--quiet"]
        args += ["--gateway-url", f"{origin}/customers/v1"] if self.gateway else []
        args += ["--strict"] if self.strict else []
        args += [arg for op in self.include for arg in ("--include", op)]
        return args + (["--no-conformance"] if self.phases == "domain" else ["--no-domain", "--profile", "fast"])

    def assert_caught(self, code: int, caught: set[str], printed: str, detail: str) -> None:
        """What the run of `run_args` must show: exit 1 (`detail` says why not), this variant's check among
        the `caught` ones, and named in what the run `printed`."""
        assert code == 1, detail
        assert self.check in caught, f"{self.name}: caught by {sorted(caught)}, not {self.check}"
        assert f"[{self.check}]" in printed


def fault(method: str, path: str, **kwargs: Any) -> Callable[[], Any]:
    return lambda: Fault(create_app(Settings()), method, path, **kwargs)


def with_store(patch: Callable[[Any], None]) -> Callable[[], Any]:
    def build() -> Any:
        app = create_app(Settings())
        patch(app.store)
        return app

    return build


def results(edit: Callable[[dict[str, Any]], None]) -> Callable[[Any], Any]:
    def apply(body: Any) -> Any:
        for item in body["results"]:
            edit(item)
        return body

    return apply


def relative_links(body: Any) -> Any:
    for which in ("next", "previous"):
        if body[which]:
            parts = urlsplit(body[which])
            body[which] = f"{parts.path}?{parts.query}"
    return body


def patch_resets(store: Any) -> None:
    update = store.update

    def reset_others(collection: str, key: Any, changes: dict[str, Any]) -> Any:
        defaults = {"textdescription": None, "htmldescription": None} if collection == "productlines" else {}
        return update(collection, key, {**defaults, **changes})

    store.update = reset_others


def stale_reads() -> Any:
    first: dict[str, Answer] = {}

    def remember(scope: Scope, answer: Answer) -> Answer:
        return first.setdefault(scope["path"], answer) if answer[0] == 200 else answer

    return Fault(create_app(Settings()), "GET", f"{API}/products/{SEGMENT}/", response=remember)


def accept_token(scope: Scope, body: bytes) -> bytes:
    """Any bearer token whose header says `alg: none` is let through as the dev API key."""
    token = header(scope, "authorization").removeprefix("Bearer ")
    if token.startswith("eyJhbGciOiJub25lIi"):
        scope["headers"] = [(k, v) for k, v in scope["headers"] if k.lower() != b"authorization"]
        scope["headers"].append((b"x-api-key", DEFAULT_API_KEY.encode()))
    return body


def any_api_key(scope: Scope, body: bytes) -> bytes:
    scope["headers"] = [(k, v) for k, v in scope["headers"] if k.lower() != b"x-api-key"]
    if header(scope, "authorization") == "":
        scope["headers"].append((b"x-api-key", DEFAULT_API_KEY.encode()))
    return body


def api_key_by_prefix(scope: Scope, body: bytes) -> bytes:
    """An API key compared on the length of the valid one: the valid key with anything after it passes."""
    sent = header(scope, "x-api-key")
    if sent.startswith(DEFAULT_API_KEY) and sent != DEFAULT_API_KEY:
        scope["headers"] = [(k, v) for k, v in scope["headers"] if k.lower() != b"x-api-key"]
        scope["headers"].append((b"x-api-key", DEFAULT_API_KEY.encode()))
    return body


def stripped_lookups(store: Any) -> None:
    """Identifiers looked up after `strip()` (a form or query layer trimming what it passes on): `" x"`
    reads, replaces, patches and deletes the item `x`."""
    get, update, delete = store.get, store.update, store.delete

    def trimmed(key: Any) -> Any:
        return key.strip() if isinstance(key, str) else key

    store.get = lambda collection, key: get(collection, trimmed(key))
    store.update = lambda collection, key, changes: update(collection, trimmed(key), changes)
    store.delete = lambda collection, key: delete(collection, trimmed(key))


def crash_on_large_pages(scope: Scope, answer: Answer) -> Answer:
    sizes = parse_qs(scope["query_string"].decode()).get("page_size", ["0"])
    if sizes[-1].isdigit() and int(sizes[-1]) >= 50:
        return 500, {"content-type": "application/json"}, b'{"detail": "boom"}'
    return answer


def drop_form_field(scope: Scope, body: bytes) -> bytes:
    if not header(scope, "content-type").startswith("application/x-www-form-urlencoded"):
        return body
    fields = {k: v for k, v in parse_qs(body.decode(), keep_blank_values=True).items() if k != "textdescription"}
    return urlencode(fields, doseq=True).encode()


class RefusingFormBodies:
    """The mock, but any form or multipart body is refused with 415, as a JSON-only backend does: a
    consumer contract's form interactions fail on it and nothing else
    (tests/contract_tests/judge/consumer/test_consumer.py, tests/e2e/drf/test_consumer.py)."""

    FORMS = ("application/x-www-form-urlencoded", "multipart/form-data")

    def __init__(self) -> None:
        self.app = create_app(Settings())

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or not header(scope, "content-type").startswith(self.FORMS):
            await self.app(scope, receive, send)
            return
        body = json.dumps({"type": "about:blank", "title": "Unsupported Media Type", "status": 415}).encode()
        headers = [(b"content-type", b"application/problem+json"), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": 415, "headers": headers})
        await send({"type": "http.response.body", "body": body})


def truncate_productline(scope: Scope, body: bytes) -> bytes:
    if not header(scope, "content-type").startswith("application/json"):
        return body
    data = json.loads(body)
    if isinstance(data, dict) and isinstance(data.get("productline"), str):
        data["productline"] = data["productline"][:50]
    return json.dumps(data).encode()


def skip_reference_check(store: Any) -> None:
    """A product's product line is not looked up (the store checks a row's references by its links)."""
    check, products = store._check_references, store.links["products"]
    store._check_references = lambda links, row: None if links is products else check(links, row)


def upsert(store: Any) -> None:
    create, update = store.create, store.update

    def create_or_replace(collection: str, record: dict[str, Any]) -> Any:
        key = record[store.tables[collection].key_field]
        return update(collection, key, record) if key in store.tables[collection].rows else create(collection, record)

    store.create = create_or_replace


def rename_copies(store: Any) -> None:
    """A writable primary key: a PUT or PATCH naming another identifier saves a copy under it."""
    update, create = store.update, store.create

    def copy_on_rename(collection: str, key: Any, changes: dict[str, Any]) -> Any:
        field = store.tables[collection].key_field
        if changes.get(field, key) == key:
            return update(collection, key, changes)
        return create(collection, {**store.get(collection, key), **changes})

    store.update = copy_on_rename


def conflict_becomes_500(scope: Scope, answer: Answer) -> Answer:
    """No protection on the foreign key: the database refuses the DELETE and the service answers 500."""
    if answer[0] != 409:
        return answer
    return 500, {"content-type": "text/html"}, b"<h1>IntegrityError: FOREIGN KEY constraint failed</h1>"


def reset_on_phone_patch(store: Any) -> None:
    """A PATCH of a customer's `phone` (not the first string field) resets its `creditlimit`."""
    update = store.update

    def reset(collection: str, key: Any, changes: dict[str, Any]) -> Any:
        if collection == "customers" and set(changes) == {"phone"}:
            changes = {**changes, "creditlimit": None}
        return update(collection, key, changes)

    store.update = reset


def previous_of_page_two_is_itself(scope: Scope, answer: Answer) -> Answer:
    """`previous` of page 2 leads back to page 2 (the link check used to skip a target of page 1)."""
    query = parse_qs(scope["query_string"].decode())
    status, headers, body = answer
    if query.get("page") != ["2"] or status != 200:
        return answer
    data = json.loads(body)
    previous = str(data["previous"])
    data["previous"] = previous + ("&" if "?" in previous else "?") + "page=2"
    return status, headers, json.dumps(data).encode()


def not_found(scope: Scope) -> Answer:
    return 404, {"content-type": "application/problem+json"}, b'{"title": "Not Found", "status": 404}'


def bad_request(scope: Scope) -> Answer:
    return 400, {"content-type": "application/problem+json"}, b'{"title": "Bad Request", "status": 400}'


def no_content(scope: Scope) -> Answer:
    return 204, {}, b""


def text_plain(scope: Scope, answer: Answer) -> Answer:
    return answer[0], {**answer[1], "content-type": "text/plain"}, answer[2]


def latin1_encoder(scope: Scope, answer: Answer) -> Answer:
    """A serializer writing latin-1 while its header says UTF-8 (a database or template default)."""
    status, headers, body = answer
    text = json.dumps(json.loads(body), ensure_ascii=False) if body else ""
    return status, {**headers, "content-type": "application/json; charset=utf-8"}, text.encode("latin-1", "replace")


def declares_utf16(scope: Scope, answer: Answer) -> Answer:
    """A proxy or framework setting a charset the body is not in: UTF-8 bytes declared UTF-16."""
    return answer[0], {**answer[1], "content-type": "application/json; charset=utf-16"}, answer[2]


def set_status(status: int) -> Callable[[Scope, Answer], Answer]:
    return lambda scope, answer: (status, answer[1], answer[2]) if answer[0] == 201 else answer


def set_field(name: str, value: Callable[[Any], Any]) -> Callable[[dict[str, Any]], None]:
    def edit(item: dict[str, Any]) -> None:
        item[name] = value(item[name])

    return edit


def single(edit: Callable[[dict[str, Any]], None]) -> Callable[[Any], Any]:
    def apply(body: Any) -> Any:
        edit(body)
        return body

    return apply


PRODUCT = f"{API}/products/{SEGMENT}/"
CUSTOMER = rf"{API}/customers/\d+/"
LINE = f"{API}/productlines/{SEGMENT}/"

VARIANTS = [
    Variant(
        "create_answers_200",
        "status_code_conformance",
        ("create_product_line",),
        "conformance",
        fault("POST", f"{API}/productlines/", response=set_status(200)),
    ),
    Variant(
        "product_without_msrp",
        "response_schema_conformance",
        ("get_product",),
        "conformance",
        fault("GET", PRODUCT, response=edit_json(lambda body: {k: v for k, v in body.items() if k != "msrp"})),
    ),
    Variant(
        "stock_as_string",
        "response_schema_conformance",
        ("list_products",),
        "conformance",
        fault("GET", f"{API}/products/", response=edit_json(results(set_field("quantityinstock", str)))),
    ),
    Variant(
        "price_with_three_decimals",
        "response_schema_conformance",
        ("list_products",),
        "conformance",
        fault("GET", f"{API}/products/", response=edit_json(results(set_field("buyprice", lambda v: "12.345")))),
        clauses=("money-pattern/answered",),
    ),
    Variant(
        "price_as_a_number",
        "response_schema_conformance",
        ("get_product",),
        "conformance",
        fault("GET", PRODUCT, response=edit_json(single(set_field("buyprice", float)))),
        clauses=("decimals/strings",),
    ),
    Variant(
        "relative_next_link",
        "pagination_page",
        ("list_customers",),
        "conformance",
        fault("GET", f"{API}/customers/", response=edit_json(relative_links)),
        clauses=("page-links/absolute",),
    ),
    Variant(
        "count_off_by_one",
        "pagination_walk",
        ("list_product_lines",),
        "domain",
        fault("GET", f"{API}/productlines/", response=edit_json(single(set_field("count", lambda c: c + 1)))),
    ),
    Variant(
        "order_of_another_customer",
        "list_scoping",
        ("get_customer_orders",),
        "domain",
        fault("GET", rf"{CUSTOMER}orders/", response=edit_json(results(set_field("customernumber", lambda n: n + 1)))),
    ),
    Variant(
        "customer_with_another_number",
        "item_identity",
        ("create_customer", "get_customer"),
        "conformance",
        fault("GET", CUSTOMER, response=edit_json(single(set_field("customernumber", lambda n: n + 1)))),
        clauses=("identifiers-exact/own-spelling",),
    ),
    Variant(
        "patch_resets_other_fields",
        "round_trip",
        ("patch_product_line",),
        "domain",
        with_store(patch_resets),
        clauses=("patch-changes-what-it-sends/others-kept",),
    ),
    Variant(
        "delete_does_not_delete",
        "deleted_stays_deleted",
        ("delete_customer",),
        "domain",
        fault("DELETE", CUSTOMER, respond=no_content),
        clauses=("unknown-resource/unknown-item",),
    ),
    Variant(
        "stale_read_after_write",
        "round_trip",
        ("get_product",),
        "domain",
        stale_reads,
        clauses=("put-replaces/replaces", "patch-changes-what-it-sends/sent-changed"),
    ),
    Variant(
        "alg_none_token_accepted",
        "auth_matrix",
        ("list_customers",),
        "domain",
        fault("GET", f"{API}/customers/", request=accept_token),
        clauses=("credentials/invalid",),
    ),
    Variant(
        "any_api_key_accepted",
        "auth_matrix",
        ("list_products",),
        "domain",
        fault("GET", f"{API}/products/", request=any_api_key),
        clauses=("credentials/invalid", "credentials/missing"),
    ),
    Variant(
        "api_key_compared_by_prefix",
        "auth_matrix",
        ("get_product",),
        "domain",
        fault("GET", PRODUCT, request=api_key_by_prefix),
        clauses=("credentials/invalid",),
    ),
    Variant(
        "identifiers_matched_after_strip",
        "identifier_variants",
        ("create_product_line", "get_product_line"),
        "domain",
        with_store(stripped_lookups),
        clauses=("identifiers-exact/different-items",),
    ),
    Variant(
        "server_error_on_large_pages",
        "not_a_server_error",
        ("list_products",),
        "conformance",
        fault("GET", f"{API}/products/", response=crash_on_large_pages),
    ),
    Variant(
        "text_plain_content_type",
        "content_type_conformance",
        ("get_product_line",),
        "conformance",
        fault("GET", LINE, response=text_plain),
        clauses=("error-body/media-type",),
    ),
    Variant(
        "gateway_reroutes_customer",
        "surface_parity",
        ("get_customer",),
        "domain",
        fault("GET", r"/customers/v1/customers/\d+/", response=edit_json(single(set_field("city", str.upper)))),
        gateway=True,
        clauses=("gateway/same-answers",),
    ),
    Variant(
        "form_body_loses_a_field",
        "body_encodings",
        ("create_product_line",),
        "domain",
        fault("POST", f"{API}/productlines/", request=drop_form_field),
        clauses=("form-text/same-fields",),
    ),
    Variant(
        "missing_product_line_accepted",
        "referential_rules",
        ("create_product",),
        "domain",
        with_store(skip_reference_check),
        clauses=("missing-reference/refused",),
    ),
    Variant(
        "overlong_identifier_truncated",
        "invalid_values_rejected",
        ("create_product_line",),
        "domain",
        fault("POST", f"{API}/productlines/", request=truncate_productline),
        clauses=("validation-failure/invalid-value",),
    ),
    Variant(
        "put_answer_not_what_was_stored",
        "write_echo",
        ("update_customer",),
        "conformance",
        fault("PUT", CUSTOMER, response=edit_json(single(set_field("city", lambda c: f"{c}-echo")))),
        clauses=("put-replaces/replaces",),
    ),
    Variant(
        "duplicate_create_accepted",
        "duplicate_rejected",
        ("create_product_line",),
        "domain",
        with_store(upsert),
        clauses=("duplicate-identifier/refused",),
    ),
    Variant(
        "identifier_with_a_dot_unreachable",
        "identifier_addressable",
        ("create_product_line",),
        "domain",
        fault("GET", rf"{API}/productlines/[^/]*\.[^/]*/", respond=not_found),
        clauses=("identifiers-in-paths/addressable",),
    ),
    Variant(
        "rename_copies_the_item",
        "identifier_immutable",
        ("update_product_line",),
        "domain",
        with_store(rename_copies),
        clauses=("identifier-change/refused",),
    ),
    Variant(
        "delete_with_dependants_500",
        "referential_rules",
        ("delete_customer",),
        "domain",
        fault("DELETE", CUSTOMER, response=conflict_becomes_500),
        clauses=("delete-with-dependants/refused",),
    ),
    Variant(
        "previous_of_page_two_wrong",
        "pagination_walk",
        ("list_product_lines",),
        "domain",
        fault("GET", f"{API}/productlines/", response=previous_of_page_two_is_itself),
        clauses=("page-links/adjacent",),
    ),
    Variant(
        "patch_of_phone_resets_credit_limit",
        "patch_locality",
        ("patch_customer",),
        "domain",
        with_store(reset_on_phone_patch),
        clauses=("patch-changes-what-it-sends/others-kept",),
    ),
    Variant(
        "latin1_under_a_utf8_header",
        "response_decodable",
        ("list_customers",),
        "domain",
        fault("GET", f"{API}/customers/", response=latin1_encoder),
    ),
    Variant(
        "utf16_declared_over_utf8",
        "response_decodable",
        ("get_product_line",),
        "conformance",
        fault("GET", LINE, response=declares_utf16),
    ),
    Variant(
        "valid_replacement_rejected",
        "positive_data_acceptance",
        ("update_product_line",),
        "conformance",
        fault("PUT", LINE, respond=bad_request),
        clauses=("validation-failure/valid-accepted",),
    ),
]


@functools.cache
def _nullable_form_fields(types: tuple[str, ...] | None = None) -> frozenset[str]:
    """The nullable fields of every request body the contract declares (read from the spec), of `types` if given.

    Read once per process: a variant asks for every customer write it serves, and reading the spec took about 21 ms
    a request, two thirds of a whole run's CPU in the process serving the variant (tests/e2e/test_determinism.py)."""
    from contract_tests.spec import Spec

    spec = Spec.load()
    return frozenset(
        name
        for op in spec.operations.values()
        for name, prop in ((op.request_schema or {}).get("properties") or {}).items()
        if prop.get("nullable") and (types is None or prop.get("type") in types)
    )


NULL_TEXTS = (b"null", b"None")
"""How JSON and Python spell null: the texts a lenient form parser takes for it."""
TEXTS = b"|".join(NULL_TEXTS)


def null_text_as_null_in(types: tuple[str, ...] | None = None) -> Callable[[Scope, bytes], bytes]:
    """A form's text `null` (or `None`) in a nullable field (of `types`, if given) arrives as the empty
    value, the form's null: a backend that stores that text as null (its JSON bodies keep the text)."""

    def rewrite(scope: Scope, body: bytes) -> bytes:
        content_type = header(scope, "content-type")
        for name in _nullable_form_fields(types):
            field = re.escape(name.encode())
            if content_type.startswith("application/x-www-form-urlencoded"):
                body = re.sub(rb"(^|&)(" + field + rb")=(?:" + TEXTS + rb")(?=&|$)", rb"\1\2=", body)
            elif content_type.startswith("multipart/form-data"):
                part = rb'(name="' + field + rb'"[^\r\n]*\r\n(?:[^\r\n]+\r\n)*\r\n)(?:' + TEXTS + rb")(\r\n--)"
                body = re.sub(part, rb"\1\2", body)
        return body

    return rewrite


null_text_as_null = null_text_as_null_in()


def form_writes_null_text() -> Any:
    """The mock, every form write of a customer through `null_text_as_null`."""
    app = create_app(Settings())
    for method, path in (("POST", f"{API}/customers/"), ("PUT", CUSTOMER), ("PATCH", CUSTOMER)):
        app = Fault(app, method, path, request=null_text_as_null)
    return app


NULL_TEXT_STORED_AS_NULL = Variant(
    "form_null_text_stored_as_null",
    "write_echo",
    ("create_customer", "update_customer", "patch_customer"),
    "conformance",
    form_writes_null_text,
    clauses=("form-text/text-as-sent",),
)
"""Schemathesis' `write_echo` catches it only when a generated form write puts the text in a nullable field,
at some seeds only, so it is not one of `VARIANTS` (each caught by its own check at one seed with the fast
profile). `patch_locality` catches it at every seed: it patches a nullable field to the text `null` by form.
tests/e2e/test_determinism.py proves that one seed finds the same in it whatever the timing."""


def case_folded(lookups: bool, creates: bool) -> Callable[[Any], None]:
    """Identifiers in a case-insensitive column (MySQL's default collation), for the item lookups (read,
    replace, patch, delete: the stored item, in its own spelling), for the creates (a case variant of an
    existing identifier is a duplicate), or for both, as a real service is."""

    def patch(store: Any) -> None:
        get, update, delete, create = store.get, store.update, store.delete, store.create

        def stored(collection: str, key: Any) -> Any:
            if not isinstance(key, str):
                return key
            return next((k for k in store.tables[collection].rows if k.casefold() == key.casefold()), key)

        def create_folded(collection: str, record: dict[str, Any]) -> Any:
            key = record.get(store.tables[collection].key_field)
            if stored(collection, key) != key:
                raise duplicate(collection, key)
            return create(collection, record)

        if lookups:
            store.get = lambda collection, key: get(collection, stored(collection, key))
            store.update = lambda collection, key, changes: update(collection, stored(collection, key), changes)
            store.delete = lambda collection, key: delete(collection, stored(collection, key))
        if creates:
            store.create = create_folded

    return patch


def collated(store: Any) -> None:
    """Lists of string identifiers in a case-insensitive collation's order (MySQL's `utf8mb4_general_ci`):
    by the key's case-folded form, two that fold alike by code point."""
    counted_page, owned = store.counted_page, store.owned

    def ordered(collection: str, records: list[Any]) -> list[Any]:
        field = store.tables[collection].key_field
        if not all(isinstance(record[field], str) for record in records):
            return records
        return sorted(records, key=lambda record: (record[field].casefold(), record[field]))

    def collated_page(collection: str, offset: int, limit: int) -> tuple[int, list[Any]]:
        count, records = counted_page(collection, 0, store.count(collection))
        return count, ordered(collection, records)[offset : offset + limit]

    def collated_owned(collection: str, field: str, owner: Any, offset: int, limit: int) -> tuple[int, list[Any]]:
        count, records = owned(collection, field, owner, 0, store.count(collection))
        return count, ordered(collection, records)[offset : offset + limit]

    store.counted_page, store.owned = collated_page, collated_owned


def case_insensitive(store: Any) -> None:
    """Letter case ignored everywhere, as a column in a case-insensitive collation has it."""
    case_folded(lookups=True, creates=True)(store)
    collated(store)


CASE_INSENSITIVE_IDENTIFIERS = Variant(
    "case_insensitive_identifiers",
    "identifier_variants",
    ("create_product_line", "get_product_line", "create_product", "get_product"),
    "domain",
    with_store(case_insensitive),
)
"""Not broken: letter case ignored consistently, in lookups, creates and the order of lists, as the Django
service on MySQL does, which the decisions `identifiers-exact` and `list-order` admit; so not one of
`VARIANTS`, and tests/contract_tests/judge/domain/test_read_back.py proves that it gets no report. Its
inconsistent halves are broken variants (tests/support/read_back_variants.py)."""
