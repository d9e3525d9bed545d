"""What the admin API, the dashboard and the realm keep beside the state, each one interface with an
in-memory and a Redis implementation (backends.py), and the same tests on both: the fault rules and
their counts, the proxy's violations, the journal's `replica`, the dashboard's stream, the realm's
maps. Then what only a shared one must do: two apps on one Redis see one of each, a count is spent
once however many replicas race for it, and Redis not answering is a 503 soon, never a hang.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
from starlette.testclient import TestClient

from mock_server.app import MockApp, create_app
from mock_server.backends import (
    IN_THIS_PROCESS,
    PER_REPLICA,
    REALM_PREFIX,
    SHARED_TIMEOUT_S,
    replica_name,
    shared_client,
)
from mock_server.control.faults.memory import FaultRules
from mock_server.control.faults.redis import RedisFaultRules
from mock_server.control.faults.rules import parse_rules
from mock_server.realm import codecs
from mock_server.realm.logins import InProcess, Memory
from mock_server.realm.shared import RedisMemory
from mock_server.settings import MEMORY, Settings
from tests.conftest import API_KEY_HEADERS, BACKEND, DEV_CLIENT, TOKEN_PATH
from tests.support.live import running
from tests.support.realm_login import AUTH_PATH, Authorization
from tests.support.redis_server import redis_server

PRODUCTS = f"{BACKEND}/products/"
BACKENDS = ["memory", "redis"]


@pytest.fixture(params=BACKENDS)
def state(request: pytest.FixtureRequest) -> str:
    """Overrides conftest's: every test of this module on both."""
    return str(request.getfixturevalue("redis_url")) if request.param == "redis" else MEMORY


def mock(state: str, name: str = "a", **options: Any) -> MockApp:
    return create_app(Settings(state=state, replica_name=name, **options))


def peer(app: MockApp, state: str, name: str) -> MockApp:
    """Another replica of `app`'s state: a second app on the same Redis; in memory, `app` itself."""
    return app if state == MEMORY else mock(state, name)


@contextlib.contextmanager
def clients(*apps: MockApp) -> Iterator[list[TestClient]]:
    with contextlib.ExitStack() as stack:
        yield [stack.enter_context(TestClient(app, headers=API_KEY_HEADERS)) for app in apps]


@pytest.fixture
def memory(state: str) -> Memory:
    return InProcess() if state == MEMORY else RedisMemory(shared_client(state), REALM_PREFIX)


def test_a_counted_rule_set_on_one_replica_fails_its_count_in_all_then_the_list_shows_it_spent(state: str) -> None:
    app = mock(state)
    with clients(app, peer(app, state, "b")) as (one, two):
        rule = {"operationId": "list_products", "fault": "status", "status": 503, "count": 2}
        assert one.put("/__mock__/faults", json=[rule]).status_code == 204
        statuses = [client.get(PRODUCTS).status_code for client in (two, one, two, one)]
        assert statuses == [503, 503, 200, 200]
        assert [listed["count"] for listed in two.get("/__mock__/faults").json()] == [0]
        assert one.put("/__mock__/faults", json=[rule]).status_code == 204  # a new list: a new count
        assert two.get(PRODUCTS).status_code == 503


def rules_of(app: MockApp, count: int) -> FaultRules:
    rules = app.faults
    rules.replace(parse_rules([{"fault": "status", "status": 500, "count": count}], rules.index))
    return rules


def test_a_count_is_spent_exactly_once_however_many_race_for_it(state: str) -> None:
    """In Redis, eight replicas' rules (each served by one event loop: here one thread each) race for
    one count; in memory there is one event loop, so one racer."""
    app = mock(state)
    racers = [app.faults]
    if state != MEMORY:
        racers = [RedisFaultRules(shared_client(state), state, app.faults.index, SHARED_TIMEOUT_S) for _ in range(8)]
    rules_of(app, 25)
    operation = next(op for _, op in app.faults.index.operations if op.operation_id == "list_products")

    def race(rules: FaultRules) -> int:
        return sum(rules.pick({"headers": []}, operation) is not None for _ in range(200 // len(racers)))

    with ThreadPoolExecutor(len(racers)) as pool:
        assert sum(pool.map(race, racers)) == 25


def test_redis_rules_show_what_is_left_in_all(redis_url: str) -> None:
    app = mock(redis_url)
    one, two = rules_of(app, 3), mock(redis_url, "b").faults
    assert isinstance(one, RedisFaultRules) and isinstance(two, RedisFaultRules)
    operation = next(op for _, op in one.index.operations if op.operation_id == "list_products")
    assert one.pick({"headers": []}, operation) is not None
    assert [rule.count for rule in two.listed()] == [2]


def test_violations_recorded_on_one_replica_are_listed_and_cleared_on_every_one(state: str) -> None:
    app = mock(state)
    other = peer(app, state, "b")
    operation = next(op for _, op in app.faults.index.operations if op.operation_id == "list_products")
    scope: dict[str, Any] = {"method": "GET", "path": PRODUCTS}
    app.violations.report(scope, operation, 200, "response", ["count: 'x' is not of type 'integer'"])
    listed = other.violations.as_json()
    assert [(v["operationId"], v["part"], v["status"]) for v in listed] == [("list_products", "response", 200)]
    assert listed == app.violations.as_json()
    assert scope["mock.violations"] == ["response: count: 'x' is not of type 'integer'"]
    other.violations.clear()
    assert app.violations.as_json() == []


def test_each_journal_entry_names_the_replica_that_served_it(state: str) -> None:
    app = mock(state, "a")
    with clients(app, peer(app, state, "b")) as (one, two):
        assert one.get(PRODUCTS).status_code == 200
        assert two.get(f"{PRODUCTS}?page=2").status_code == 200
        served = {entry["query"]: entry["replica"] for entry in one.get("/__mock__/requests").json()}
        health = two.get("/__mock__/health").json()
    assert served == {"": "a", "page=2": "a" if state == MEMORY else "b"}
    assert health["replica"] == ("a" if state == MEMORY else "b")  # the replica answering, and what it keeps
    assert tuple(health["per_replica"]) == (IN_THIS_PROCESS if state == MEMORY else PER_REPLICA)


def test_the_default_replica_name_is_host_and_pid_and_a_name_given_to_workers_gets_each_ones_pid() -> None:
    assert replica_name(Settings()).endswith(f":{os.getpid()}")
    assert replica_name(Settings(replica_name="eu-1")) == "eu-1"
    assert replica_name(Settings(replica_name="eu-1", workers=2)) == f"eu-1:{os.getpid()}"


def exchanges(http: httpx.Client, seen: list[dict[str, Any]], opened: threading.Event) -> None:
    """Read the stream until its first exchange."""
    with contextlib.suppress(httpx.HTTPError, httpx.StreamError), http.stream("GET", "/__mock__/ui/stream") as answer:
        for line in answer.iter_lines():
            if line == ": open":
                opened.set()
            elif line.startswith("data: "):
                seen.append(json.loads(line.removeprefix("data: ")))
                return


def test_a_stream_on_one_replica_shows_the_requests_of_every_one_with_the_replica_that_served_it(state: str) -> None:
    app = mock(state, "a")
    seen: list[dict[str, Any]] = []
    opened = threading.Event()
    with running(app) as origin, TestClient(peer(app, state, "b"), headers=API_KEY_HEADERS) as two:
        with httpx.Client(base_url=origin, timeout=30) as watcher:
            reader = threading.Thread(target=exchanges, args=(watcher, seen, opened), daemon=True)
            reader.start()
            assert opened.wait(10)
            assert two.get(PRODUCTS).status_code == 200
            deadline = time.monotonic() + 1
            while not seen and time.monotonic() < deadline:
                time.sleep(0.01)
        reader.join(10)
    assert [(e["path"], e["replica"]) for e in seen] == [(PRODUCTS, "a" if state == MEMORY else "b")]


# the realm's maps


def test_a_taken_value_is_taken_once(memory: Memory) -> None:
    codes = memory.map("codes", codecs.Text(), 10)
    codes.put("code", "session", 60)
    with ThreadPoolExecutor(8) as pool:
        taken = list(pool.map(lambda _: codes.pop("code"), range(16)))
    assert taken.count("session") == 1 and taken.count(None) == 15


def test_a_swap_from_a_value_someone_changed_first_changes_nothing(memory: Memory) -> None:
    turns = memory.map("turns", codecs.Text(), 10)
    turns.put("session", "first", 60)
    assert turns.swap("session", "first", "second", 60)
    assert not turns.swap("session", "first", "third", 60)
    assert turns.get("session") == "second"
    assert not turns.swap("gone", "first", "second", 60)


def test_a_map_holds_its_capacity_at_most_and_forgets_what_expired(memory: Memory) -> None:
    pending = memory.map("pending", codecs.Text(), 3)
    for number in range(5):
        pending.put(f"tab{number}", str(number), 60)
    assert [pending.get(f"tab{n}") for n in range(5)] == [None, None, "2", "3", "4"]
    pending.put("brief", "x", 0.05)
    time.sleep(0.1)
    assert pending.get("brief") is None


def test_a_login_page_served_by_one_replica_takes_the_form_posted_to_another(redis_url: str) -> None:
    realm_of = {name: mock(redis_url, name, issuer="http://mock.test/realms/shop").realm for name in "ab"}
    authorization = Authorization()
    request = realm_of["a"].authorization_request(authorization.params())
    tab, binding = realm_of["a"].begin_login(request, None)
    _, cookie = realm_of["b"].login(tab, binding, "shop-user", "shop-password")
    assert realm_of["a"].browser_session(cookie) is not None  # single sign-on on the other replica too


# Redis not answering


@contextlib.contextmanager
def paused(url: str) -> Iterator[None]:
    """The redis-server at `url` stopped (SIGSTOP): it accepts connections and answers nothing."""
    import redis

    pid = int(redis.Redis.from_url(url).info()["process_id"])
    os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(pid, signal.SIGCONT)


def timed(call: Any) -> tuple[httpx.Response, float]:
    started = time.monotonic()
    response = call()
    return response, time.monotonic() - started


def test_a_silent_redis_is_a_clear_503_soon_on_the_admin_api_and_the_realm() -> None:
    bound = 3 * SHARED_TIMEOUT_S + 2  # a few bounded waits, never a hang
    with redis_server() as url:
        client = TestClient(mock(url), headers=API_KEY_HEADERS, raise_server_exceptions=False)
        with client, paused(url):
            for call in (
                lambda: client.get("/__mock__/faults"),
                lambda: client.put("/__mock__/faults", json=[]),
                lambda: client.get("/__mock__/violations"),
                lambda: client.get("/__mock__/requests"),
            ):
                response, took = timed(call)
                assert (response.status_code, response.json()["detail"]) == (503, "The shared state did not answer.")
                assert took < bound
            form = {**DEV_CLIENT, "grant_type": "password", "username": "shop-user", "password": "shop-password"}
            token, took = timed(lambda: client.post(TOKEN_PATH, data=form))
            assert token.status_code == 503 and token.json()["error"] == "temporarily_unavailable"
            assert took < bound
            page, took = timed(lambda: client.get(AUTH_PATH, params=Authorization().params()))
            assert page.status_code == 503 and "did not answer" in page.text
            assert took < bound
