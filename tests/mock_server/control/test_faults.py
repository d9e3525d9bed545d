"""Latency and faults over real HTTP, each seen by a real client (httpx) as the fault it is."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from mock_server.app import create_app
from mock_server.control.prefer import MAX_DELAY_MS
from mock_server.settings import MEMORY, Settings
from tests.conftest import API_KEY_HEADERS, BACKEND
from tests.support.live import TRUSTED, running

PRODUCT = f"{BACKEND}/products/S10_1678/"
DISCONNECTED = (httpx.RemoteProtocolError, httpx.ReadError)  # closed before or during the answer


@pytest.fixture(params=[MEMORY, "redis"])
def origin(request: pytest.FixtureRequest) -> Iterator[str]:
    """The mock with its rules in this process, and with them shared in Redis (control.faults.redis)."""
    state = request.getfixturevalue("redis_url") if request.param == "redis" else MEMORY
    with running(create_app(Settings(state=state))) as served:
        yield served


@pytest.fixture
def http(origin: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=origin, headers=API_KEY_HEADERS, timeout=30, verify=TRUSTED) as client:
        yield client


def install(http: httpx.Client, *rules: dict[str, Any]) -> None:
    response = http.put("/__mock__/faults", json=list(rules))
    assert response.status_code == 204, response.text


def last_fault(http: httpx.Client) -> Any:
    """The journal's newest entry that notes a fault."""
    return [entry for entry in http.get("/__mock__/requests").json() if entry["fault"]][-1]


def test_drop_closes_the_connection_before_any_answer_and_serves_nothing(http: httpx.Client) -> None:
    install(http, {"fault": "drop", "operationId": "create_product_line"})
    with pytest.raises(DISCONNECTED):
        http.post(f"{BACKEND}/productlines/", json={"productline": "Rockets"})
    assert http.get(f"{BACKEND}/productlines/Rockets/").status_code == 404
    entry = last_fault(http)
    assert (entry["operationId"], entry["status"], entry["fault"]["fault"]) == ("create_product_line", None, "drop")


def test_cut_sends_half_the_body_then_closes(http: httpx.Client) -> None:
    whole = http.get(PRODUCT).content
    install(http, {"fault": "cut", "path": "/products/{productcode}/"})
    with pytest.raises(httpx.RemoteProtocolError, match=f"received {len(whole) // 2} bytes, expected {len(whole)}"):
        http.get(PRODUCT)
    assert last_fault(http)["fault"]["fault"] == "cut"


def test_empty_answers_the_status_with_no_body(http: httpx.Client) -> None:
    install(http, {"fault": "empty", "method": "GET", "surface": "backend"})
    response = http.get(PRODUCT)
    assert (response.status_code, response.content) == (200, b"")
    assert last_fault(http)["fault"]["fault"] == "empty"


def test_status_answers_a_problem_without_serving(http: httpx.Client) -> None:
    install(http, {"fault": "status", "status": 503, "operationId": "create_product_line"})
    response = http.post(f"{BACKEND}/productlines/", json={"productline": "Rockets"})
    assert response.status_code == 503
    assert response.json()["status"] == 503 and response.headers["content-type"] == "application/problem+json"
    http.delete("/__mock__/faults")
    assert http.get(f"{BACKEND}/productlines/Rockets/").status_code == 404
    assert http.get("/__mock__/requests", params={"status": 503}).json()[0]["fault"]["fault"] == "status"


def test_applied_but_lost_commits_the_write_and_the_client_sees_no_answer(http: httpx.Client) -> None:
    install(http, {"fault": "lost", "operationId": "create_product_line", "count": 1})
    with pytest.raises(DISCONNECTED):
        http.post(f"{BACKEND}/productlines/", json={"productline": "Rockets"})
    assert http.get(f"{BACKEND}/productlines/Rockets/").status_code == 200  # committed
    retried = http.post(f"{BACKEND}/productlines/", json={"productline": "Rockets"})
    assert retried.status_code == 409  # what a client's naive retry meets
    lost = http.get("/__mock__/requests", params={"operationId": "create_product_line"}).json()[0]
    assert (lost["status"], lost["fault"]["fault"]) == (201, "lost")


def test_count_limits_a_rule_and_the_list_shows_what_is_left(http: httpx.Client) -> None:
    install(http, {"fault": "status", "status": 500, "method": "GET", "count": 2})
    assert http.get("/__mock__/faults").json()[0]["count"] == 2
    assert [http.get(PRODUCT).status_code for _ in range(4)] == [500, 500, 200, 200]
    assert http.get("/__mock__/faults").json()[0]["count"] == 0
    assert http.get("/__mock__/requests/count", params={"status": 500}).json() == {"count": 2}


def test_probability_zero_never_applies_and_rules_match_by_operation(http: httpx.Client) -> None:
    install(
        http,
        {"fault": "status", "status": 500, "method": "GET", "probability": 0},
        {"fault": "status", "status": 502, "operationId": "list_products"},
    )
    assert http.get(PRODUCT).status_code == 200
    assert http.get(f"{BACKEND}/products/").status_code == 502
    assert http.delete("/__mock__/faults").status_code == 204
    assert http.get("/__mock__/faults").json() == []
    assert http.get(f"{BACKEND}/products/").status_code == 200


BAD_RULES = [
    ({"fault": "drop"}, "JSON array"),
    ([{"fault": "explode"}], "fault must be one of"),
    ([{"fault": "drop", "colour": "red"}], "colour"),
    ([{"fault": "drop", "method": "BREW"}], "method 'BREW'"),
    ([{"fault": "drop", "path": "/nowhere/"}], "path '/nowhere/'"),
    ([{"fault": "drop", "operationId": "launch"}], "operationId 'launch'"),
    ([{"fault": "drop", "surface": "moon"}], "surface 'moon'"),
    ([{"fault": "status"}], "a status fault needs status"),
    ([{"fault": "status", "status": 200}], "a status fault needs status"),
    ([{"fault": "drop", "status": 500}], "status is only for a status fault"),
    ([{"fault": "delay"}], "a delay fault needs"),
    ([{"fault": "delay", "delay_ms": MAX_DELAY_MS + 1}], "delay_ms must be a number"),
    ([{"fault": "delay", "median_ms": 10}], "needs both median_ms and sigma"),
    ([{"fault": "delay", "median_ms": 0, "sigma": 1}], "median_ms must be above 0"),
    ([{"fault": "delay", "delay_ms": 1, "median_ms": 10, "sigma": 1}], "not both"),
    ([{"fault": "drop", "probability": 2}], "probability"),
    ([{"fault": "drop", "count": 0}], "count"),
    ([{"fault": "drop"}, "drop"], "rule 1: must be an object"),
]


def test_a_bad_rule_list_is_400_naming_what_is_wrong_and_changes_nothing(http: httpx.Client) -> None:
    installed = [{"fault": "delay", "delay_ms": 1, "probability": 1.0}]
    install(http, *installed)
    for rules, named in BAD_RULES:
        response = http.put("/__mock__/faults", json=rules)
        assert response.status_code == 400, rules
        assert named in response.json()["detail"], (rules, response.json()["detail"])
        assert http.get("/__mock__/faults").json() == installed
    for text, says in [
        (b"[{", "The fault list is not valid JSON"),
        (b"[NaN]", "The fault list is not valid JSON: NaN"),
        (b'[{"fault": "\xff"}]', "Invalid fault list: (body): is not valid UTF-8"),
    ]:
        response = http.put("/__mock__/faults", content=text)
        assert response.status_code == 400 and response.json()["detail"].startswith(says), response.text
    assert http.get("/__mock__/faults").json() == installed


def test_a_bad_prefer_delay_is_400(http: httpx.Client) -> None:
    for delay in ("-1", "soon", str(MAX_DELAY_MS + 1)):
        response = http.get(PRODUCT, headers={"Prefer": f"delay={delay}"})
        assert response.status_code == 400 and str(MAX_DELAY_MS) in response.json()["detail"], delay


async def race(origin: str, delayed: dict[str, Any], other: dict[str, Any]) -> list[str]:
    """Start the delayed request, then the other: the order in which they complete."""
    finished: list[str] = []

    async def call(client: httpx.AsyncClient, name: str, request: dict[str, Any]) -> None:
        response = await client.request(**request)
        assert response.is_success, response.text
        finished.append(name)

    async with httpx.AsyncClient(base_url=origin, headers=API_KEY_HEADERS, timeout=30) as client:
        first = asyncio.create_task(call(client, "delayed", delayed))
        await asyncio.sleep(0.05)  # the delayed request is in the server's hands (delays are 1 s)
        await call(client, "other", other)
        await first
    return finished


def test_a_delayed_request_does_not_delay_a_concurrent_one(origin: str) -> None:
    delayed = {"method": "GET", "url": PRODUCT, "headers": {"Prefer": "delay=1000"}}
    other = {"method": "GET", "url": PRODUCT}
    assert asyncio.run(race(origin, delayed, other)) == ["other", "delayed"]


def test_a_delay_rule_holds_no_lock_on_writes(origin: str, http: httpx.Client) -> None:
    install(http, {"fault": "delay", "median_ms": 1000, "sigma": 0.01, "operationId": "create_product_line"})
    delayed = {"method": "POST", "url": f"{BACKEND}/productlines/", "json": {"productline": "Rockets"}}
    other = {"method": "PATCH", "url": f"{BACKEND}/productlines/Motorcycles/", "json": {"textdescription": "Fast."}}
    assert asyncio.run(race(origin, delayed, other)) == ["other", "delayed"]
    entry = http.get("/__mock__/requests", params={"operationId": "create_product_line"}).json()[0]
    assert entry["fault"]["fault"] == "delay" and 900 < entry["fault"]["delay_ms"] < 1100
    assert entry["duration_ms"] >= entry["fault"]["delay_ms"]


def test_rules_and_prefer_meet_an_operation_whose_identifier_holds_an_escaped_slash(http: httpx.Client) -> None:
    """`/productlines/Slash%2FLine/` is get_product_line (an escaped `/` stays in its segment)."""
    install(http, {"fault": "status", "status": 503, "operationId": "get_product_line"})
    assert http.get(f"{BACKEND}/productlines/Slash%2FLine/").status_code == 503
    refused = http.get(f"{BACKEND}/products/Slash%2FCode/", headers={"Prefer": "delay=soon"})
    assert refused.status_code == 400 and refused.json()["detail"].startswith("Prefer: delay")
