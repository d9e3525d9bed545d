"""The hot path as a budget (control/bypass.py): a request asking for no control feature skips
their layers, and is answered, journaled and headed exactly as through the whole stack."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from connexion.middleware import ConnexionMiddleware

from mock_server.app import create_app
from mock_server.control.bypass import Bypass
from mock_server.control.faults.middleware import Faults
from mock_server.settings import Settings
from tests.conftest import API_KEY_HEADERS, BACKEND
from tests.support.live import running

PRODUCT = f"{BACKEND}/products/S10_1678/"
WHOLE_STACK = {"Cookie": "unrelated=1"}  # any cookie may name a session: the request takes every layer


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    with (
        running(create_app(Settings())) as origin,
        httpx.Client(base_url=origin, headers=API_KEY_HEADERS, timeout=30) as client,
    ):
        # Connexion builds its stack on the first call; from the next one, the app's entry serves the bypass.
        assert client.get("/__mock__/health").status_code == 200
        yield client


def answer(response: httpx.Response) -> tuple[int, bytes, list[tuple[str, str]]]:
    headers = sorted((name, value) for name, value in response.headers.multi_items() if name != "date")
    return response.status_code, response.content, headers


PATHS = [
    PRODUCT,
    f"{BACKEND}/products/?page=2",
    f"{BACKEND}/products/NOPE/",
    f"{BACKEND}/products/S10%2F1678/",  # escaped: RawPath's work, so the whole stack
    f"{BACKEND}/customers/{'9' * 40}/",  # an integer out of bounds: RawPath's 404
    "/",
]


@pytest.mark.parametrize("path", PATHS)
def test_a_plain_request_is_answered_as_through_the_whole_stack(http: httpx.Client, path: str) -> None:
    plain = http.get(path)
    assert answer(plain) == answer(http.get(path, headers=WHOLE_STACK))
    assert plain.headers["vary"] == "Origin"  # CORS's, added on the bypass too


def test_a_plain_request_is_journaled_as_any(http: httpx.Client) -> None:
    http.get(PRODUCT)
    http.get(PRODUCT, headers=WHOLE_STACK)
    entries = http.get("/__mock__/requests", params={"path": PRODUCT}).json()
    assert [(entry["status"], entry["operationId"]) for entry in entries] == [(200, "get_product")] * 2


def test_a_fault_rule_added_at_run_time_meets_the_next_plain_request(http: httpx.Client) -> None:
    assert http.get(PRODUCT).status_code == 200
    rule = {"fault": "status", "status": 503, "path": "/products/{productcode}/"}
    assert http.put("/__mock__/faults", json=[rule]).status_code == 204
    assert http.get(PRODUCT).status_code == 503
    assert http.delete("/__mock__/faults").status_code == 204
    assert http.get(PRODUCT).status_code == 200


def test_a_plain_request_skips_the_control_layers(monkeypatch: pytest.MonkeyPatch) -> None:
    passed: list[str] = []
    through = Faults.__call__

    async def counted(self: Faults, scope: Any, receive: Any, send: Any) -> None:
        passed.append(scope["path"])
        await through(self, scope, receive, send)

    monkeypatch.setattr(Faults, "__call__", counted)
    with (
        running(create_app(Settings())) as origin,
        httpx.Client(base_url=origin, headers=API_KEY_HEADERS, timeout=30) as client,
    ):
        assert client.get("/__mock__/health").status_code == 200  # the admin API: the whole stack (built now)
        assert client.get(PRODUCT).status_code == 200
        assert client.get(PRODUCT, headers={"Prefer": "code=404"}).status_code == 404
    assert passed == ["/__mock__/health", PRODUCT]  # the plain request met no Faults


def test_a_rule_for_other_operations_leaves_a_plain_request_on_the_bypass(monkeypatch: pytest.MonkeyPatch) -> None:
    """A rule costs only the requests it could meet the whole stack (benchmarks/README.md: shared_control)."""
    passed: list[str] = []
    through = Faults.__call__

    async def counted(self: Faults, scope: Any, receive: Any, send: Any) -> None:
        passed.append(scope["method"])
        await through(self, scope, receive, send)

    monkeypatch.setattr(Faults, "__call__", counted)
    rules = [
        {"fault": "status", "status": 503, "method": "DELETE", "path": "/products/{productcode}/"},
        {"fault": "status", "status": 502, "operationId": "get_product", "session": "only-this-one"},
    ]
    with (
        running(create_app(Settings())) as origin,
        httpx.Client(base_url=origin, headers=API_KEY_HEADERS, timeout=30) as client,
    ):
        assert client.put("/__mock__/faults", json=rules).status_code == 204
        assert client.get(PRODUCT).status_code == 200  # no rule can meet it: the bypass
        assert client.delete(f"{BACKEND}/products/NOPE/").status_code == 503  # the first rule's operation
        assert client.get(PRODUCT, headers={"X-Mock-Session": "only-this-one"}).status_code == 502
    assert passed == ["PUT", "DELETE", "GET"]


def test_a_plain_request_skips_connexions_entry_and_each_request_is_asked_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Connexion's entry and its error middleware do nothing for a plain request (an eighth of GET one's time:
    benchmarks/benchmark-history.md, "The declarative stack and the bypass"); a request the app's entry sends into
    Connexion is not asked again."""
    entered: list[str] = []
    asked: list[str] = []
    enter, takes = ConnexionMiddleware.__call__, Bypass.takes

    async def counted(self: ConnexionMiddleware, scope: Any, receive: Any, send: Any) -> None:
        entered.append(scope["path"])
        await enter(self, scope, receive, send)

    def asking(self: Bypass, scope: Any) -> bool:
        asked.append(scope["path"])
        return takes(self, scope)

    monkeypatch.setattr(ConnexionMiddleware, "__call__", counted)
    monkeypatch.setattr(Bypass, "takes", asking)
    with (
        running(create_app(Settings())) as origin,
        httpx.Client(base_url=origin, headers=API_KEY_HEADERS, timeout=30) as client,
    ):
        assert client.get(PRODUCT).status_code == 200  # Connexion's stack is built now, by this request
        assert client.get(PRODUCT).status_code == 200
        assert client.get(PRODUCT, headers={"Prefer": "code=404"}).status_code == 404
    assert entered == [PRODUCT, PRODUCT]  # the first, and the one asking for steering
    assert asked == [PRODUCT] * 3
