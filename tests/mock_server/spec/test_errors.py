"""Typed errors: every error body is the spec's `Problem`, names what is wrong, once.

Operations, parameters, bounds and field rules are read from the spec, so a new parameter or a new
money field is covered without a change here.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from mock_server.spec.schemas import SchemaValidator, component_schema, dereference, load_spec
from tests.conftest import BACKEND, GATEWAY

SPEC = load_spec()
METHODS = ("get", "post", "put", "patch", "delete")
PROBLEM = SchemaValidator(component_schema("Problem"))


def operations(gateway: bool = False) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(method, path with the parameters' examples filled in, dereferenced operation)."""
    for path, item in SPEC["paths"].items():
        if gateway and "servers" not in item:
            continue
        for method in METHODS:
            if method in item:
                operation = dereference(item[method], SPEC)
                parameters = dereference(item.get("parameters", []), SPEC) + operation.get("parameters", [])
                examples = {p["name"]: p["example"] for p in parameters if p["in"] == "path"}
                yield method, path.format(**examples), {**operation, "parameters": parameters}


def bounded_query_parameters() -> list[tuple[str, str, str, int]]:
    """(method, path, parameter, minimum) for every integer query parameter with a minimum."""
    return [
        (method, path, p["name"], p["schema"]["minimum"])
        for method, path, operation in operations()
        for p in operation["parameters"]
        if p["in"] == "query" and p["schema"].get("type") == "integer" and "minimum" in p["schema"]
    ]


def decimal_fields() -> list[tuple[str, str]]:
    """(request schema, field) for every field with both the money pattern and `format: decimal`."""
    return [
        (name, field)
        for name in SPEC["components"]["schemas"]
        if name.endswith("Request") and not name.startswith("Patched")
        for field, rule in component_schema(name).get("properties", {}).items()
        if rule.get("format") == "decimal" and "pattern" in rule
    ]


def create_path(schema: str) -> str:
    """The path of the create operation whose request body is `schema`."""
    body = {"$ref": f"#/components/requestBodies/{schema}"}
    return next(path for path, item in SPEC["paths"].items() if item.get("post", {}).get("requestBody") == body)


def assert_problem(response: httpx.Response) -> dict[str, Any]:
    body: dict[str, Any] = response.json()
    assert PROBLEM.errors(body) == [], body
    assert {"type", "title", "status", "detail"} <= set(body), body
    assert body["status"] == response.status_code
    return body


@pytest.mark.parametrize(("method", "path", "name", "minimum"), bounded_query_parameters())
@pytest.mark.parametrize("below", [True, False], ids=["below-minimum", "not-an-integer"])
def test_a_bad_query_parameter_is_400_naming_it_once(
    client: httpx.Client, method: str, path: str, name: str, minimum: int, below: bool
) -> None:
    value = str(minimum - 1) if below else "abc"
    response = client.request(method, f"{BACKEND}{path}", params={name: value})
    assert response.status_code == 400
    body = assert_problem(response)
    assert [error["field"] for error in body["errors"]] == [name]
    assert name in body["detail"]


@pytest.mark.parametrize(("schema", "field"), decimal_fields())
def test_a_value_breaking_two_rules_of_one_field_gives_one_error(client: httpx.Client, schema: str, field: str) -> None:
    response = client.post(f"{BACKEND}{create_path(schema)}", json={field: "abc"})  # neither pattern nor decimal
    assert response.status_code == 400
    fields = [error["field"] for error in assert_problem(response)["errors"]]
    assert fields.count(field) == 1
    assert len(fields) == len(set(fields)), fields


@pytest.mark.parametrize(("method", "path"), [(m, p) for m, p, _ in operations(gateway=True)])
def test_an_api_key_at_the_gateway_is_told_that_the_gateway_takes_bearer_tokens(
    client: httpx.Client, method: str, path: str
) -> None:
    response = client.request(method, f"{GATEWAY}{path}", json={} if method in ("post", "put", "patch") else None)
    assert response.status_code == 401
    detail = assert_problem(response)["detail"]
    assert "bearer" in detail.lower() and "X-API-Key" in detail


@pytest.mark.parametrize(
    ("method", "path", "headers", "content", "status"),
    [
        ("GET", f"{BACKEND}/productlines/", {}, None, 401),
        ("GET", f"{BACKEND}/productlines/", {"X-API-Key": "wrong"}, None, 401),
        ("GET", f"{BACKEND}/productlines/", {"Authorization": "Bearer garbage"}, None, 401),
        ("GET", f"{BACKEND}/products/NOPE/", {}, None, 404),
        ("GET", f"{BACKEND}/productlines/?page=999", {}, None, 404),
        ("PUT", f"{BACKEND}/productlines/", {}, None, 405),
        ("DELETE", f"{BACKEND}/productlines/Classic%20Cars/", {}, None, 409),
        ("POST", f"{BACKEND}/productlines/", {"Content-Type": "text/plain"}, b"x", 415),
        ("POST", f"{BACKEND}/productlines/", {"Content-Type": "application/json"}, b"{x", 400),
        ("POST", f"{BACKEND}/productlines/", {"Content-Type": "application/json"}, b"x" * (1024 * 1024 + 1), 413),
    ],
)
def test_every_kind_of_error_body_is_a_problem(
    client: httpx.Client, method: str, path: str, headers: dict[str, str], content: bytes | None, status: int
) -> None:
    if status == 401:
        client.headers.pop("X-API-Key")
    response = client.request(method, path, headers=headers, content=content)
    assert response.status_code == status
    assert response.headers["content-type"] == "application/problem+json"
    assert_problem(response)
