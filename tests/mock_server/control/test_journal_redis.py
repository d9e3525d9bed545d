"""The request journal of a shared state: replicas on one real redis-server keep one journal, read
at once by any of them, with the in-memory journal's answers (tests/mock_server/control/test_journal.py)."""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import functools
import json
import logging
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from starlette.testclient import TestClient

from mock_server.app import create_app
from mock_server.control.journal.base import BODY_LIMIT
from mock_server.control.journal.memory import MemoryJournal
from mock_server.settings import DEFAULT_API_KEY, Settings
from tests.conftest import API_KEY_HEADERS, BACKEND, fetch_token
from tests.mock_server.control.test_journal import PRODUCT, count, journal
from tests.mock_server.state.test_redis_store import replicas
from tests.support.redis_server import redis_server

LINES = f"{BACKEND}/productlines/"
REALM_DISCOVERY = "/realms/shop/.well-known/openid-configuration"  # served without the state
VARYING = ("id", "time", "at", "duration_ms")  # what two journals cannot share for one exchange


@pytest.fixture
def pair(redis_url: str) -> Iterator[tuple[TestClient, TestClient]]:
    """Two replicas of one state (journals of 50 entries), each with its own in-process client."""
    one, other = (create_app(Settings(state=redis_url, journal_size=50)) for _ in range(2))
    with (
        TestClient(one, headers=API_KEY_HEADERS) as one_client,
        TestClient(other, headers=API_KEY_HEADERS) as other_client,
    ):
        yield one_client, other_client


def product(n: int) -> str:
    return f"{BACKEND}/products/S99_{n:04d}/"


def test_a_request_served_by_one_replica_is_listed_by_the_other_at_once(pair: tuple[TestClient, TestClient]) -> None:
    for n in range(20):
        served, read = pair[n % 2], pair[1 - n % 2]
        served.get(product(n))
        assert [e["path"] for e in journal(read, limit=1)] == [product(n)]  # no waiting: it is in Redis already
    assert journal(pair[0]) == journal(pair[1])
    assert [e["id"] for e in journal(pair[0])] == list(range(1, 21))


def test_filters_and_the_count_agree_across_replicas(pair: tuple[TestClient, TestClient]) -> None:
    one, other = pair
    start = datetime.datetime.now(datetime.UTC).isoformat()
    for served, code in zip((one, other, one), ("S10_1678", "S10_1949", "NOPE"), strict=True):
        served.get(f"{BACKEND}/products/{code}/")
    other.delete(PRODUCT)  # 409: it has order details
    one.get(f"{BACKEND}/products/")
    for client in pair:
        assert [e["path"] for e in journal(client, operationId="get_product")] == [
            f"{BACKEND}/products/{code}/" for code in ("S10_1678", "S10_1949", "NOPE")
        ]
        assert [e["status"] for e in journal(client, method="delete")] == [409]
        assert [e["operationId"] for e in journal(client, path=PRODUCT)] == ["get_product", "delete_product"]
        assert count(client, status="4xx") == 2 and count(client, status=404) == 1
        assert count(client, operationId="get_product", status=200) == 2
        assert count(client, since=start) == 5 and count(client, until=start) == 0
        assert [e["path"] for e in journal(client, operationId="get_product", limit=1)] == [f"{BACKEND}/products/NOPE/"]
        assert client.get("/__mock__/requests/count", params={"status": "fourhundred"}).status_code == 400


def test_delete_on_one_replica_clears_the_journal_of_both(pair: tuple[TestClient, TestClient]) -> None:
    one, other = pair
    one.get(PRODUCT)
    other.get(PRODUCT)
    assert count(one) == count(other) == 2
    assert other.delete("/__mock__/requests").status_code == 204
    assert count(one) == count(other) == 0
    one.get(PRODUCT)
    assert [e["id"] for e in journal(other)] == [3]  # ids go on after a clear, as in memory


def test_the_size_bound_holds_across_replicas(pair: tuple[TestClient, TestClient]) -> None:
    for n in range(60):
        pair[n % 2].get(product(n))
    for client in pair:
        entries = journal(client)
        assert [e["path"] for e in entries] == [product(n) for n in range(10, 60)]  # Settings(journal_size=50)
        assert [e["id"] for e in entries] == list(range(11, 61))  # unique across replicas


def test_credentials_are_masked_in_every_replicas_answer(pair: tuple[TestClient, TestClient]) -> None:
    one = pair[0]
    token = fetch_token(one)
    headers = {"Authorization": f"Bearer {token}", "Cookie": "sid=session-secret"}
    one.post(LINES, json={"productline": "Rockets", "textdescription": "Up."}, headers=headers)
    for client in pair:
        entry = journal(client, operationId="create_product_line")[-1]
        request_headers = entry["request"]["headers"]  # type: ignore[index]
        assert request_headers["authorization"] == "Bearer ***"
        assert request_headers["x-api-key"] == "***" and request_headers["cookie"] == "sid=***"
        token_response = json.loads(journal(client)[0]["response"]["body"])  # type: ignore[index]  # the realm's
        assert token_response["access_token"] == "***"
        everything = json.dumps(journal(client))
        assert not any(secret in everything for secret in (token, DEFAULT_API_KEY, "session-secret", "shop-dev-secret"))


def exchanges(client: TestClient) -> list[dict[str, Any]]:
    """A few of every kind: realm, read, write, truncated, invalid bytes, injected fault; the journal after."""
    response = client.put(
        "/__mock__/faults", json=[{"fault": "status", "status": 503, "operationId": "delete_product"}]
    )
    assert response.status_code == 204
    fetch_token(client)
    client.get(PRODUCT, params={"q": "ünïcode"}, headers={"X-Raw": b"\xe9t\xe9 \xff\x80"})
    client.get(f"{BACKEND}/products/NOPE/")
    client.post(LINES, json={"productline": "Long", "htmldescription": "x" * (BODY_LIMIT * 2)})
    client.post(LINES, content=b'{"productline": "\xff\xfe"}', headers={"Content-Type": "application/json"})
    client.delete(PRODUCT)
    entries = journal(client)
    assert len(entries) == 6
    return [{key: value for key, value in entry.items() if key not in VARYING} for entry in entries]


def test_both_journals_answer_the_same_json_for_the_same_exchanges(redis_url: str) -> None:
    with (
        TestClient(create_app(Settings()), headers=API_KEY_HEADERS) as memory,
        TestClient(create_app(Settings(state=redis_url)), headers=API_KEY_HEADERS) as shared,
    ):
        assert exchanges(shared) == exchanges(memory)


def test_bytes_round_trip_through_redis_losslessly(redis_url: str) -> None:
    from mock_server.control.journal.redis import RedisJournal

    every_byte = bytes(range(256))
    scope = {"method": "POST", "path": "/ü/", "query_string": every_byte, "headers": [(b"x-raw", every_byte)]}
    index = create_app(Settings()).journal.index
    memory, shared = MemoryJournal(5, index), RedisJournal(redis_url, 5, index)

    async def serve() -> None:
        for kept in (memory, shared):
            fault = {"fault": "delay", "delay_ms": 1.5}
            kept.record(scope, time.perf_counter(), 201, [(b"x-raw", every_byte)], every_byte, every_byte[::-1], fault)

    asyncio.run(serve())
    [recorded], [read] = memory.entries(), shared.entries()
    assert abs(read.at - recorded.at) < 1 and read.duration < 1
    assert dataclasses.replace(read, at=recorded.at, duration=recorded.duration) == recorded


def test_while_redis_is_down_a_journal_read_is_a_503_and_a_request_its_usual_answer(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from mock_server.control.journal import redis as redis_journal

    monkeypatch.setattr(redis_journal, "RETRY_S", 0.0)  # every push tries Redis: still one warning
    with redis_server() as url:
        client = TestClient(create_app(Settings(state=url)), headers=API_KEY_HEADERS, raise_server_exceptions=False)
        with client:
            client.get(PRODUCT)
            assert count(client) == 1
    with client, caplog.at_level(logging.WARNING, logger="mock_server.journal"):
        for _ in range(3):
            assert client.get(REALM_DISCOVERY).status_code == 200  # recording fails no request
            for response in (client.get(PRODUCT), client.post(LINES, json={"productline": "Rockets"})):
                assert response.status_code == 503, response.text  # the store's, as without a journal
        for method, path in (
            ("GET", "/__mock__/requests"),
            ("GET", "/__mock__/requests/count"),
            ("DELETE", "/__mock__/requests"),
        ):
            response = client.request(method, path)
            assert response.status_code == 503, (method, path, response.text)
            assert response.headers["content-type"] == "application/problem+json"
            assert "The shared state did not answer" in response.json()["detail"]
    assert [record.levelname for record in caplog.records if record.name == "mock_server.journal"] == ["WARNING"]


def test_a_connection_redis_closed_is_replaced_before_the_next_push(
    pair: tuple[TestClient, TestClient], redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import redis

    from mock_server.control.journal import redis as redis_journal

    monkeypatch.setattr(redis_journal, "IDLE_S", 0.0)  # every push finds out first: as any after a pause
    one, other = pair
    one.get(PRODUCT)
    assert count(other) == 1
    redis.Redis.from_url(redis_url).client_kill_filter(_type="normal", skipme=True)  # as Redis's idle timeout does
    one.get(PRODUCT)
    assert count(other) == 2


def eventually(read: Callable[[], object], expected: object) -> None:
    """Wait for `read()` to be `expected`: a replica process that the OS preempts as its answer wakes the
    client pushes the exchange when it runs again, a few ms later (in process, above, it is there at once)."""
    deadline = time.monotonic() + 2
    while read() != expected:
        assert time.monotonic() < deadline, f"{read()!r}, not {expected!r}, after 2 s"
        time.sleep(0.005)


def newest(client: httpx.Client) -> list[object]:
    return [entry["path"] for entry in journal(client, limit=1)]


def test_replica_processes_share_the_journal_over_http(redis_url: str) -> None:
    with replicas(redis_url, 2) as group, replicas(redis_url, 1, "--workers", "2") as (pooled,):
        clients: list[httpx.Client] = [replica.http for replica in [*group, pooled]]
        for n in range(12):
            clients[n % 3].get(product(n))
            eventually(functools.partial(newest, clients[(n + 1) % 3]), [product(n)])
        for _ in range(8):  # the pooled replica's two workers share one journal too
            pooled.http.get(PRODUCT)
        eventually(functools.partial(count, clients[0], path=PRODUCT), 8)
        answers = [journal(client) for client in clients]
        assert answers[0] == answers[1] == answers[2]
        assert [e["id"] for e in answers[0]] == list(range(1, 21))
