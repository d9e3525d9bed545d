"""The spec against the interface documents: the guard against spec drift.

The documents' endpoint and field tables are written here (users' clones do not have the documents),
and every operationId, method, path, success status, field bound, nullability and required flag of the
spec is checked against them.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import schemathesis
import yaml
from openapi_spec_validator import validate

SPEC_PATH = Path(__file__).resolve().parents[2] / "openapi" / "openapi.yaml"
MONEY = r"^-?\d{0,8}(?:\.\d{0,2})?$"
INT16 = (-32768, 32767)
INT32 = (-2147483648, 2147483647)

# operationId, method, path (relative to the mount point), request body schema (required?), status
ENDPOINTS = [
    ("create_product_line", "post", "/productlines/", ("ProductLineRequest", True), "201"),
    ("list_product_lines", "get", "/productlines/", None, "200"),
    ("get_product_line", "get", "/productlines/{productline}/", None, "200"),
    ("update_product_line", "put", "/productlines/{productline}/", ("ProductLineRequest", True), "200"),
    ("patch_product_line", "patch", "/productlines/{productline}/", ("PatchedProductLineRequest", False), "200"),
    ("delete_product_line", "delete", "/productlines/{productline}/", None, "204"),
    ("get_product_line_products", "get", "/productlines/{productline}/products/", None, "200"),
    ("create_product", "post", "/products/", ("ProductRequest", True), "201"),
    ("list_products", "get", "/products/", None, "200"),
    ("get_product", "get", "/products/{productcode}/", None, "200"),
    ("update_product", "put", "/products/{productcode}/", ("ProductRequest", True), "200"),
    ("patch_product", "patch", "/products/{productcode}/", ("PatchedProductRequest", False), "200"),
    ("delete_product", "delete", "/products/{productcode}/", None, "204"),
    ("get_product_order_details", "get", "/products/{productcode}/order-details/", None, "200"),
    ("list_customers", "get", "/customers/", None, "200"),
    ("create_customer", "post", "/customers/", ("CustomerRequest", True), "201"),
    ("get_customer", "get", "/customers/{customernumber}/", None, "200"),
    ("update_customer", "put", "/customers/{customernumber}/", ("CustomerRequest", True), "200"),
    ("patch_customer", "patch", "/customers/{customernumber}/", ("PatchedCustomerRequest", False), "200"),
    ("delete_customer", "delete", "/customers/{customernumber}/", None, "204"),
    ("get_customer_orders", "get", "/customers/{customernumber}/orders/", None, "200"),
    ("get_customer_payments", "get", "/customers/{customernumber}/payments/", None, "200"),
]
SUCCESS_SCHEMAS = {
    "create_product_line": "ProductLine",
    "list_product_lines": "PaginatedProductLineList",
    "get_product_line": "ProductLine",
    "update_product_line": "ProductLine",
    "patch_product_line": "ProductLine",
    "get_product_line_products": "PaginatedProductList",
    "create_product": "Product",
    "list_products": "PaginatedProductList",
    "get_product": "Product",
    "update_product": "Product",
    "patch_product": "Product",
    "get_product_order_details": "PaginatedOrderdetailList",
    "list_customers": "PaginatedCustomerList",
    "create_customer": "Customer",
    "get_customer": "Customer",
    "update_customer": "Customer",
    "patch_customer": "Customer",
    "get_customer_orders": "PaginatedOrderList",
    "get_customer_payments": "PaginatedPaymentList",
}


def field(
    kind: str,
    *,
    max_length: int | None = None,
    min_length: int | None = None,
    nullable: bool = False,
    bounds: tuple[int, int] | None = None,
    fmt: str | None = None,
    read_only: bool = False,
) -> dict[str, Any]:
    """One row of a documents' field table."""
    return {
        "kind": kind,
        "maxLength": max_length,
        "minLength": min_length,
        "nullable": nullable,
        "bounds": bounds,
        "format": fmt,
        "readOnly": read_only,
    }


def money(nullable: bool = False) -> dict[str, Any]:
    return field("money", nullable=nullable)


PRODUCT_LINE = {
    "productline": field("string", max_length=50),
    "textdescription": field("string", max_length=4000, nullable=True),
    "htmldescription": field("string", nullable=True),
    "image": field("string", nullable=True, fmt="byte", read_only=True),
}
PRODUCT_LINE_REQUEST = {
    "productline": field("string", min_length=1, max_length=50),
    "textdescription": field("string", max_length=4000, nullable=True),
    "htmldescription": field("string", nullable=True),
}
PRODUCT = {
    "productcode": field("string", max_length=15),
    "productname": field("string", max_length=70),
    "productscale": field("string", max_length=10),
    "productvendor": field("string", max_length=50),
    "productdescription": field("string"),
    "quantityinstock": field("integer", bounds=INT16),
    "buyprice": money(),
    "msrp": money(),
    "productline": field("string"),
}
PRODUCT_REQUEST = {
    "productcode": field("string", min_length=1, max_length=15),
    "productname": field("string", min_length=1, max_length=70),
    "productscale": field("string", min_length=1, max_length=10),
    "productvendor": field("string", min_length=1, max_length=50),
    "productdescription": field("string", min_length=1),
    "quantityinstock": field("integer", bounds=INT16),
    "buyprice": money(),
    "msrp": money(),
    "productline": field("string", min_length=1),
}
ORDERDETAIL = {
    "id": field("integer", read_only=True),
    "quantityordered": field("integer", bounds=INT32),
    "priceeach": money(),
    "orderlinenumber": field("integer", bounds=INT16),
    "ordernumber": field("integer", bounds=INT32),
    "productcode": field("string"),
}
CUSTOMER_TEXT = ["customername", "contactlastname", "contactfirstname", "phone", "addressline1", "city"]
CUSTOMER = {
    "customernumber": field("integer", bounds=INT32),
    **{name: field("string", max_length=50) for name in CUSTOMER_TEXT},
    "addressline2": field("string", max_length=50, nullable=True),
    "state": field("string", max_length=50, nullable=True),
    "postalcode": field("string", max_length=15, nullable=True),
    "country": field("string", max_length=50),
    "creditlimit": money(nullable=True),
    "salesrepemployeenumber": field("integer", bounds=INT32, nullable=True),
}
CUSTOMER_REQUEST = {
    **CUSTOMER,
    **{name: field("string", min_length=1, max_length=50) for name in [*CUSTOMER_TEXT, "country"]},
}
ORDER = {
    "ordernumber": field("integer", bounds=INT32),
    "orderdate": field("string", fmt="date"),
    "requireddate": field("string", fmt="date"),
    "shippeddate": field("string", fmt="date", nullable=True),
    "status": field("string", max_length=15),
    "comments": field("string", nullable=True),
    "customernumber": field("integer", bounds=INT32),
}
PAYMENT = {
    "id": field("integer", read_only=True),
    "checknumber": field("string", max_length=50),
    "paymentdate": field("string", fmt="date"),
    "amount": money(),
    "customernumber": field("integer", bounds=INT32),
}
CUSTOMER_REQUIRED = {"customernumber", *CUSTOMER_TEXT, "country"}

# schema name -> (fields, required)
SCHEMAS: dict[str, tuple[dict[str, dict[str, Any]], set[str]]] = {
    "ProductLine": (PRODUCT_LINE, {"productline", "image"}),
    "ProductLineRequest": (PRODUCT_LINE_REQUEST, {"productline"}),
    "PatchedProductLineRequest": (PRODUCT_LINE_REQUEST, set()),
    "Product": (PRODUCT, set(PRODUCT)),
    "ProductRequest": (PRODUCT_REQUEST, set(PRODUCT_REQUEST)),
    "PatchedProductRequest": (PRODUCT_REQUEST, set()),
    "Orderdetail": (ORDERDETAIL, set(ORDERDETAIL)),
    "Customer": (CUSTOMER, CUSTOMER_REQUIRED),
    "CustomerRequest": (CUSTOMER_REQUEST, CUSTOMER_REQUIRED),
    "PatchedCustomerRequest": (CUSTOMER_REQUEST, set()),
    "Order": (ORDER, {"ordernumber", "orderdate", "requireddate", "status", "customernumber"}),
    "Payment": (PAYMENT, set(PAYMENT)),
}
ENVELOPES = {
    "PaginatedProductLineList": "ProductLine",
    "PaginatedProductList": "Product",
    "PaginatedOrderdetailList": "Orderdetail",
    "PaginatedCustomerList": "Customer",
    "PaginatedOrderList": "Order",
    "PaginatedPaymentList": "Payment",
}
CUSTOMER_OPERATIONS = {op for op, _, path, _, _ in ENDPOINTS if path.startswith("/customers/")}
METHODS = {"get", "put", "post", "patch", "delete", "head", "options", "trace"}


@pytest.fixture(scope="module")
def spec() -> dict[str, Any]:
    with SPEC_PATH.open(encoding="utf-8") as stream:
        loaded: dict[str, Any] = yaml.safe_load(stream)
    return loaded


def resolve(spec: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    """Follow a local `$ref` (one level is all this spec uses per node)."""
    while "$ref" in node:
        target: Any = spec
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        node = target
    return node


def operations(spec: dict[str, Any]) -> dict[str, tuple[str, str, dict[str, Any]]]:
    found = {}
    for path, item in spec["paths"].items():
        for method, operation in item.items():
            if method in METHODS:
                found[operation["operationId"]] = (method, path, operation)
    return found


def test_spec_is_valid_openapi_3_0_3(spec: dict[str, Any]) -> None:
    validate(spec)
    assert spec["openapi"] == "3.0.3"
    assert spec["info"]["version"] == "4.7.0"


def test_schemathesis_loads_the_spec_and_lists_all_operations() -> None:
    schema = schemathesis.openapi.from_path(str(SPEC_PATH))
    labels = {result.ok().label for result in schema.get_all_operations()}
    expected = {f"{method.upper()} {path}" for _, method, path, _, _ in ENDPOINTS}
    assert labels == expected


def test_every_documented_operation_is_in_the_spec_and_nothing_else(spec: dict[str, Any]) -> None:
    assert set(operations(spec)) == {op for op, *_ in ENDPOINTS}


@pytest.mark.parametrize(("operation_id", "method", "path", "body", "status"), ENDPOINTS)
def test_operation_matches_the_documents(
    spec: dict[str, Any],
    operation_id: str,
    method: str,
    path: str,
    body: tuple[str, bool] | None,
    status: str,
) -> None:
    found_method, found_path, operation = operations(spec)[operation_id]
    assert (found_method, found_path) == (method, path)
    successes = [code for code in operation["responses"] if code.startswith("2")]
    assert successes == [status]
    success = operation["responses"][status]
    if status == "204":
        assert "content" not in success
    else:
        assert list(success["content"]) == ["application/json"]
        ref = success["content"]["application/json"]["schema"]["$ref"]
        assert ref == f"#/components/schemas/{SUCCESS_SCHEMAS[operation_id]}"
    if body is None:
        assert "requestBody" not in operation
        return
    schema_name, required = body
    request_body = resolve(spec, operation["requestBody"])
    assert request_body.get("required", False) is required
    media = ["application/json", "application/x-www-form-urlencoded", "multipart/form-data"]
    assert sorted(request_body["content"]) == sorted(media)
    for content in request_body["content"].values():
        assert content["schema"]["$ref"] == f"#/components/schemas/{schema_name}"


@pytest.mark.parametrize(("operation_id", "method", "path", "body", "status"), ENDPOINTS)
def test_list_operations_take_page_and_page_size(
    spec: dict[str, Any], operation_id: str, method: str, path: str, body: object, status: str
) -> None:
    _, _, operation = operations(spec)[operation_id]
    names = {resolve(spec, p)["name"] for p in operation.get("parameters", [])}
    is_list = SUCCESS_SCHEMAS.get(operation_id, "").startswith("Paginated")
    assert (names == {"page", "page_size"}) is is_list
    for param in operation.get("parameters", []):
        assert resolve(spec, param)["schema"]["type"] == "integer"


def test_path_parameters_are_typed_as_documented(spec: dict[str, Any]) -> None:
    params = spec["components"]["parameters"]
    assert params["productline"]["schema"]["type"] == "string"
    assert params["productcode"]["schema"]["type"] == "string"
    assert params["customernumber"]["schema"]["type"] == "integer"


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_schema_fields_match_the_documents(spec: dict[str, Any], name: str) -> None:
    fields, required = SCHEMAS[name]
    schema = spec["components"]["schemas"][name]
    assert set(schema.get("required", [])) == required
    assert set(schema["properties"]) == set(fields)
    for field_name, expected in fields.items():
        prop = resolve(spec, schema["properties"][field_name])
        where = f"{name}.{field_name}"
        assert prop.get("nullable", False) is expected["nullable"], where
        assert prop.get("readOnly", False) is expected["readOnly"], where
        if expected["kind"] == "money":
            assert prop["type"] == "string", where
            assert prop["pattern"] == MONEY, where
            continue
        assert prop["type"] == expected["kind"], where
        assert prop.get("maxLength") == expected["maxLength"], where
        assert prop.get("minLength") == expected["minLength"], where
        bounds = (prop.get("minimum"), prop.get("maximum"))
        assert bounds == (expected["bounds"] or (None, None)), where
        assert prop.get("format") in {expected["format"], "int32" if expected["bounds"] == INT32 else None}


@pytest.mark.parametrize(("envelope", "item"), sorted(ENVELOPES.items()))
def test_paginated_envelopes(spec: dict[str, Any], envelope: str, item: str) -> None:
    schema = spec["components"]["schemas"][envelope]
    props = schema["properties"]
    assert set(props) == {"count", "next", "previous", "results"}
    assert set(schema["required"]) == set(props)
    assert props["count"]["type"] == "integer"
    for link in ("next", "previous"):
        assert props[link] == {**props[link], "type": "string", "format": "uri", "nullable": True}
    assert props["results"]["items"]["$ref"] == f"#/components/schemas/{item}"


def test_both_security_schemes_are_as_documented(spec: dict[str, Any]) -> None:
    schemes = spec["components"]["securitySchemes"]
    assert schemes["ApiKeyAuth"] | {"description": ""} == {
        "type": "apiKey",
        "in": "header",
        "name": "X-API-Key",
        "description": "",
    }
    assert schemes["JWTAuth"]["type"] == "http"
    assert schemes["JWTAuth"]["scheme"] == "bearer"
    assert schemes["JWTAuth"]["bearerFormat"] == "JWT"


def test_every_operation_lists_both_security_alternatives(spec: dict[str, Any]) -> None:
    for operation_id, (_, _, operation) in operations(spec).items():
        assert operation["security"] == [{"ApiKeyAuth": []}, {"JWTAuth": []}], operation_id


def test_servers_are_the_documented_mount_points(spec: dict[str, Any]) -> None:
    def urls(servers: list[dict[str, Any]]) -> list[str]:
        return [s["url"].format(**{k: "" for k in s.get("variables", {})}) for s in servers]

    assert urls(spec["servers"]) == ["/shop/api/v1"]
    for path, item in spec["paths"].items():
        expected = ["/shop/api/v1", "/customers/v1"] if path.startswith("/customers/") else None
        assert (urls(item["servers"]) if "servers" in item else None) == expected, path
    gateway = spec["paths"]["/customers/"]["servers"][1]
    assert "bearer token" in gateway["description"]


def test_every_operation_documents_its_error_responses(spec: dict[str, Any]) -> None:
    for operation_id, (method, path, operation) in operations(spec).items():
        codes = set(operation["responses"])
        expected = {"401", "403"}
        if "{" in path or SUCCESS_SCHEMAS.get(operation_id, "").startswith("Paginated"):
            expected.add("404")
        if "requestBody" in operation:
            expected |= {"400", "409", "413", "415"}
        if method == "delete":
            expected.add("409")
        assert expected <= codes, operation_id
        for code in codes - {"200", "201", "204"}:
            response = resolve(spec, operation["responses"][code])
            assert set(response["content"]) == {"application/json", "application/problem+json"}
    unauthorized = spec["components"]["responses"]["Unauthorized"]
    assert "WWW-Authenticate" in unauthorized["headers"]


@pytest.mark.parametrize(
    ("create", "targets"),
    [
        (
            "create_product_line",
            [
                "get_product_line",
                "update_product_line",
                "patch_product_line",
                "delete_product_line",
                "get_product_line_products",
            ],
        ),
        (
            "create_product",
            ["get_product", "update_product", "patch_product", "delete_product", "get_product_order_details"],
        ),
        (
            "create_customer",
            [
                "get_customer",
                "update_customer",
                "patch_customer",
                "delete_customer",
                "get_customer_orders",
                "get_customer_payments",
            ],
        ),
    ],
)
def test_every_create_operation_links_to_what_it_created(spec: dict[str, Any], create: str, targets: list[str]) -> None:
    _, _, operation = operations(spec)[create]
    links = operation["responses"]["201"]["links"]
    assert sorted(link["operationId"] for link in links.values()) == sorted(targets)
    for link in links.values():
        _, path, _ = operations(spec)[link["operationId"]]
        ((name, expression),) = link["parameters"].items()
        assert f"{{{name}}}" in path
        assert expression == f"$response.body#/{name}"


def test_examples_validate_against_their_schemas(spec: dict[str, Any]) -> None:
    """Every property example fits its property; every response example fits its schema."""
    checked = 0
    for name, schema in spec["components"]["schemas"].items():
        for prop_name, prop in schema.get("properties", {}).items():
            prop = resolve(spec, prop)
            if "example" not in prop:
                continue
            if prop["example"] is None:
                assert prop.get("nullable"), f"{name}.{prop_name}"
                continue
            bare = {k: v for k, v in prop.items() if k not in {"nullable", "readOnly", "example"}}
            jsonschema.validate(prop["example"], bare, format_checker=jsonschema.FormatChecker())
            checked += 1
    assert checked > 50


@pytest.mark.parametrize("money_value", ["", "-", ".", "-."])
def test_documented_money_pattern_quirk_is_closed_by_format_decimal(spec: dict[str, Any], money_value: str) -> None:
    money_schema = spec["components"]["schemas"]["Money"]
    assert re.match(money_schema["pattern"], money_value)
    assert money_schema["format"] == "decimal"
    assert "at least one digit" in money_schema["description"]


def test_customer_operations_are_exactly_those_under_the_gateway(spec: dict[str, Any]) -> None:
    gateway_paths = {path for path, item in spec["paths"].items() if "servers" in item}
    gateway_operations = {
        operation["operationId"]
        for path in gateway_paths
        for method, operation in spec["paths"][path].items()
        if method in METHODS
    }
    assert gateway_operations == CUSTOMER_OPERATIONS
