"""Response steering over real HTTP: `Prefer: code=NNN` and `Prefer: example=NAME`, Prism's habits.

The operations, their declared statuses and their named examples are read from the spec, so each
property is checked for every one of them. Steering must never change the state.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import httpx
import jsonschema
import pytest

from mock_server.app import create_app
from mock_server.settings import Settings
from mock_server.spec.operations import Operation
from mock_server.spec.schemas import component_schema, load_spec, mount_points, to_json_schema
from mock_server.surfaces import BACKEND_PREFIX, GATEWAY_PREFIX, operation_index
from tests.conftest import API_KEY_HEADERS, BACKEND
from tests.support.live import TRUSTED, running

SPEC = load_spec()
OPERATIONS = [operation for _, operation in operation_index(SPEC, *mount_points(SPEC)).operations]
PROBLEM = to_json_schema(component_schema("Problem"))


@pytest.fixture(params=[True, False], ids=["fast-path", "connexion-only"])
def http(request: pytest.FixtureRequest) -> Iterator[httpx.Client]:
    """A live mock, with and without its fast path: steering must apply in front of both."""
    with (
        running(create_app(Settings(fast_path=request.param))) as origin,
        httpx.Client(base_url=origin, headers=API_KEY_HEADERS, timeout=30, verify=TRUSTED) as client,
    ):
        yield client


def url(operation: Operation) -> str:
    prefix = BACKEND_PREFIX if operation.surface == "backend" else GATEWAY_PREFIX
    return prefix + re.sub(r"\{\w+\}", "S10_1678", operation.template)


def steer(http: httpx.Client, operation: Operation, preference: str, **kwargs: Any) -> httpx.Response:
    return http.request(operation.method, url(operation), headers={"Prefer": preference}, **kwargs)


def test_every_declared_error_status_is_answered_with_a_problem_and_changes_nothing(http: httpx.Client) -> None:
    before = http.get("/__mock__/state").json()
    for operation in OPERATIONS:
        for status in (code for code in operation.declared() if code >= 400):
            response = steer(http, operation, f"code={status}", json={})
            assert response.status_code == status, (operation.operation_id, status, response.text)
            assert response.headers["content-type"] == "application/problem+json"
            jsonschema.validate(response.json(), PROBLEM)
            assert response.json()["status"] == status
            assert response.headers["preference-applied"] == f"code={status}"
            if status == 401:
                assert "www-authenticate" in response.headers
    assert http.get("/__mock__/state").json() == before


def test_an_undeclared_status_is_400_naming_the_declared_ones(http: httpx.Client) -> None:
    for operation in OPERATIONS:
        undeclared = next(code for code in (418, 299, 500, 302) if code not in operation.declared())
        for preference in (f"code={undeclared}", "code=abc"):
            response = steer(http, operation, preference)
            assert response.status_code == 400, (operation.operation_id, response.text)
            detail = response.json()["detail"]
            assert operation.operation_id in detail
            assert all(str(code) in detail for code in operation.declared())


def test_steered_successful_writes_answer_what_they_would_and_change_nothing(http: httpx.Client) -> None:
    before = http.get("/__mock__/state").json()
    line = {"productline": "Rockets", "textdescription": "Up.", "htmldescription": None}
    created = http.post(f"{BACKEND}/productlines/", json=line, headers={"Prefer": "code=201"})
    assert created.status_code == 201 and created.headers["preference-applied"] == "code=201"
    assert created.json() == {**line, "image": None}
    replaced = http.put(
        f"{BACKEND}/productlines/Motorcycles/", json={"productline": "Motorcycles"}, headers={"Prefer": "code=200"}
    )
    assert replaced.status_code == 200 and replaced.json()["textdescription"] is None
    ordered = {detail["productcode"] for detail in before["orderdetails"]}
    childless = next(product for product in before["products"] if product["productcode"] not in ordered)
    deleted = http.delete(f"{BACKEND}/products/{childless['productcode']}/", headers={"Prefer": "code=204"})
    assert deleted.status_code == 204 and deleted.content == b""
    assert http.get("/__mock__/state").json() == before


def test_a_steered_success_the_operation_would_not_give_is_400_and_changes_nothing(http: httpx.Client) -> None:
    before = http.get("/__mock__/state").json()
    for method, path, body in (
        ("POST", "/productlines/", {"productline": "Classic Cars"}),  # exists: 409 for real
        ("POST", "/productlines/", {"textdescription": "no identifier"}),  # invalid: 400 for real
        ("DELETE", "/products/S10_1678/", None),  # has order details: 409 for real
    ):
        code = 201 if method == "POST" else 204
        response = http.request(method, BACKEND + path, json=body, headers={"Prefer": f"code={code}"})
        assert response.status_code == 400, response.text
        assert "would not succeed" in response.json()["detail"]
    assert http.get("/__mock__/state").json() == before


def test_a_steered_read_success_is_the_real_answer(http: httpx.Client) -> None:
    plain = http.get(f"{BACKEND}/products/S10_1678/")
    steered = http.get(f"{BACKEND}/products/S10_1678/", headers={"Prefer": "code=200"})
    assert (steered.status_code, steered.json()) == (200, plain.json())
    assert steered.headers["preference-applied"] == "code=200"
    missing = http.get(f"{BACKEND}/products/S99_9999/", headers={"Prefer": "code=200"})
    assert missing.status_code == 404 and "preference-applied" not in missing.headers  # not honoured: not claimed


def named_examples() -> list[tuple[Operation, str, int, Any]]:
    return [
        (operation, name, int(status), example["value"])
        for operation in OPERATIONS
        for status, response in operation.responses.items()
        for content in response.get("content", {}).values()
        for name, example in content.get("examples", {}).items()
    ]


def test_every_named_example_is_answered_and_unknown_ones_are_listed(http: httpx.Client) -> None:
    examples = named_examples()
    assert examples, "the spec has no named example to steer to"
    before = http.get("/__mock__/state").json()
    for operation, name, status, value in examples:
        response = steer(http, operation, f"example={name}")
        assert (response.status_code, response.json()) == (status, value)
        assert steer(http, operation, f"code={status}, example={name}").json() == value
        unknown = steer(http, operation, "example=no-such-example")
        assert unknown.status_code == 400
        names = {other for found, other, _, _ in examples if found == operation}
        assert all(other in unknown.json()["detail"] for other in names)
    assert http.get("/__mock__/state").json() == before


def test_steering_ignores_requests_outside_the_api_and_prefer_without_code_or_example(http: httpx.Client) -> None:
    assert http.get("/__mock__/health", headers={"Prefer": "code=404"}).status_code == 200
    response = http.get(f"{BACKEND}/products/S10_1678/", headers={"Prefer": "return=minimal"})
    assert response.status_code == 200 and "preference-applied" not in response.headers


LINE = {"productline": "Rockets", "textdescription": "Up."}
MEDIA = ["json", "urlencoded", "multipart"]  # every media type the spec accepts for a write


def encoded(media: str, fields: dict[str, str]) -> dict[str, Any]:
    """httpx's arguments for a body of `fields` in `media`."""
    if media == "json":
        return {"json": fields}
    if media == "urlencoded":
        return {"data": fields}
    return {"files": {name: (None, value) for name, value in fields.items()}}


@pytest.mark.parametrize("media", MEDIA)
def test_a_steered_write_succeeds_exactly_as_the_unsteered_one_in_every_media_type(
    http: httpx.Client, media: str
) -> None:
    before = http.get("/__mock__/state").json()
    lines = f"{BACKEND}/productlines/"
    steered = http.post(lines, headers={"Prefer": "code=201"}, **encoded(media, LINE))
    assert steered.status_code == 201, steered.text
    assert steered.headers["preference-applied"] == "code=201"
    change = encoded(media, {"textdescription": "Changed."})
    patched = http.patch(f"{lines}Motorcycles/", headers={"Prefer": "code=200"}, **change)
    assert patched.status_code == 200 and patched.json()["textdescription"] == "Changed.", patched.text
    assert http.get("/__mock__/state").json() == before
    plain = http.post(lines, **encoded(media, LINE))
    assert (plain.status_code, plain.json()) == (201, steered.json())


@pytest.mark.parametrize("media", MEDIA)
def test_a_steered_write_that_would_fail_in_any_media_type_is_400_and_changes_nothing(
    http: httpx.Client, media: str
) -> None:
    before = http.get("/__mock__/state").json()
    lines = f"{BACKEND}/productlines/"
    for fields, status in (({"productline": "Motorcycles"}, 409), ({"textdescription": "No identifier."}, 400)):
        steered = http.post(lines, headers={"Prefer": "code=201"}, **encoded(media, fields))
        assert steered.status_code == 400, steered.text
        assert f"would answer {status}" in steered.json()["detail"], steered.text
        assert http.post(lines, **encoded(media, fields)).status_code == status
    assert http.get("/__mock__/state").json() == before


@pytest.mark.parametrize(
    "path", ["/__mock__/health", "/__mock__/faults", "/realms/shop/.well-known/openid-configuration"]
)
def test_prefer_is_ignored_outside_the_api(http: httpx.Client, path: str) -> None:
    """Steering and Prefer delays apply to the API's operations only: a delay the client would time
    out on, and values no preference takes, change nothing there."""
    plain = http.get(path)
    for preference in ("delay=60000", "delay=abc", "code=abc", "code=404", "example=none", f"delay={'9' * 5000}"):
        response = http.get(path, headers={"Prefer": preference}, timeout=10)
        assert (response.status_code, response.json()) == (plain.status_code, plain.json()), preference
        assert "preference-applied" not in response.headers
    assert all(entry["fault"] is None for entry in http.get("/__mock__/requests", params={"path": path}).json())
