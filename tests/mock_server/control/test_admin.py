"""The /__mock__ admin API: health, reset, state export and import, the request journal."""

from __future__ import annotations

import json

import httpx
import pytest

from mock_server.settings import DEFAULT_FIXTURES
from tests.conftest import BACKEND, ON_REDIS, transport


@pytest.fixture(params=["in-process", "http", ON_REDIS])
def api(request: pytest.FixtureRequest) -> httpx.Client:
    """Both transports, and the same tests on the Redis store (in process)."""
    return transport(request)


COLLECTIONS = ("productlines", "products", "orderdetails", "customers", "orders", "payments")


def test_health_counts_the_loaded_data(api: httpx.Client) -> None:
    response = api.get("/__mock__/health")
    assert response.status_code == 200
    assert response.json()["counts"]["products"] == 75


def test_state_export_is_the_fixture_data(api: httpx.Client) -> None:
    state = api.get("/__mock__/state").json()
    for name in COLLECTIONS:
        assert state[name] == json.loads((DEFAULT_FIXTURES / f"{name}.json").read_text(encoding="utf-8"))


def test_reset_goes_back_to_the_loaded_fixtures(api: httpx.Client) -> None:
    before = api.get("/__mock__/state").json()
    api.post(f"{BACKEND}/productlines/", json={"productline": "Rockets"})
    api.delete(f"{BACKEND}/products/S24_1785/")
    assert api.get("/__mock__/state").json() != before
    assert api.post("/__mock__/reset").status_code == 204
    assert api.get("/__mock__/state").json() == before


def test_state_import_replaces_everything(api: httpx.Client) -> None:
    state = api.get("/__mock__/state").json()
    state["productlines"] = [line for line in state["productlines"] if line["productline"] == "Construction Vehicles"]
    state["products"], state["orderdetails"] = [], []
    assert api.put("/__mock__/state", json=state).status_code == 204
    page = api.get(f"{BACKEND}/productlines/").json()
    assert [line["productline"] for line in page["results"]] == ["Construction Vehicles"]
    assert api.get(f"{BACKEND}/products/").json()["count"] == 0


def test_a_bad_import_is_400_naming_the_problem_and_changes_nothing(api: httpx.Client) -> None:
    before = api.get("/__mock__/state").json()
    broken = json.loads(json.dumps(before))
    broken["products"][0]["productline"] = "Submarines"
    response = api.put("/__mock__/state", json=broken)
    assert response.status_code == 400
    assert "products.json" in response.json()["detail"] and "'productline'" in response.json()["detail"]
    for bad in (b"{", b"[]", json.dumps({**before, "orders": [{"ordernumber": "x"}]}).encode()):
        assert api.put("/__mock__/state", content=bad).status_code == 400
    assert api.get("/__mock__/state").json() == before


def test_the_journal_lists_the_last_requests(api: httpx.Client) -> None:
    api.get(f"{BACKEND}/products/S10_1678/")
    api.get(f"{BACKEND}/products/NOPE/")
    entries = api.get("/__mock__/requests", params={"limit": 2}).json()
    assert [(e["method"], e["path"], e["status"]) for e in entries] == [
        ("GET", f"{BACKEND}/products/S10_1678/", 200),
        ("GET", f"{BACKEND}/products/NOPE/", 404),
    ]
    assert all(e["duration_ms"] >= 0 for e in entries)
