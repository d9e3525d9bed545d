"""Sessions over real HTTP: each X-Mock-Session (or mock_session cookie) its own copy of the seed,
isolated under concurrent writers, copy-on-write, expiring, bounded; admin, faults, journal and
pagination per session. Every test that serves a mock runs on both states: in memory, and shared
through Redis (where replicas share the sessions too)."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from mock_server.app import MockApp, create_app
from mock_server.arguments import parse_settings
from mock_server.control.mock_sessions.registry import SessionError, SessionRegistry, session_name
from mock_server.settings import MEMORY, Settings
from mock_server.state.fixtures import record_fields
from mock_server.state.memory import MemoryStore
from tests.conftest import API_KEY_HEADERS, BACKEND
from tests.support.live import running

LINES = f"{BACKEND}/productlines/"
PRODUCTS = f"{BACKEND}/products/"


@pytest.fixture(params=[MEMORY, "redis"])
def state_url(request: pytest.FixtureRequest) -> str:
    """Where the state lives: in memory, or in the session's redis-server."""
    if request.param == MEMORY:
        return MEMORY
    url: str = request.getfixturevalue("redis_url")
    return url


@pytest.fixture
def app(state_url: str) -> MockApp:
    return create_app(Settings(state=state_url))


def serve(**settings: Any) -> Any:
    return running(create_app(Settings(**settings)))


@contextlib.contextmanager
def client_of(**settings: Any) -> Iterator[httpx.Client]:
    """A client of a mock served with `settings`, authenticated with the default API key."""
    with serve(**settings) as origin, httpx.Client(base_url=origin, headers=API_KEY_HEADERS) as http:
        yield http


def size_after(http: httpx.Client, name: str, changed: int, state_url: str) -> int:
    """A session's `size`: in memory, the records it changed; in Redis, every record it holds."""
    if state_url == MEMORY:
        return changed
    counts = http.get("/__mock__/health", headers=in_session(name)).json()["counts"]
    return sum(counts.values())


def in_session(name: str) -> dict[str, str]:
    return {"X-Mock-Session": name}


def state(http: httpx.Client, session: str | None = None) -> Any:
    response = http.get("/__mock__/state", headers=in_session(session) if session else {})
    assert response.status_code == 200, response.text
    return response.json()


def sessions(http: httpx.Client) -> dict[str, Any]:
    response = http.get("/__mock__/sessions")
    assert response.status_code == 200, response.text
    return {entry["name"]: entry for entry in response.json()}


def by_key(records: list[dict[str, Any]], key: str) -> dict[Any, dict[str, Any]]:
    return {record[key]: record for record in records}


def test_sessions_are_isolated_under_concurrent_writers(app: MockApp, live_origin: str, http: httpx.Client) -> None:
    """Four sessions write at once (creates, patches, deletes; fast path and Connexion), while the
    default state is read: each session ends with the seed plus its own writes, nothing else."""
    seed = state(http)
    product = seed["products"][0]
    names = [f"worker-{n}" for n in range(4)]
    expected: dict[str, dict[str, dict[Any, Any]]] = {}
    errors: list[str] = []

    def work(name: str) -> None:
        mine = {"products": by_key(seed["products"], "productcode")}
        with httpx.Client(base_url=live_origin, headers={**API_KEY_HEADERS, **in_session(name)}, timeout=30) as client:
            for n in range(15):
                code = f"{name}_{n}"
                created = client.post(PRODUCTS, json={**product, "productcode": code, "productname": f"{name} {n}"})
                if created.status_code != 201:
                    errors.append(f"{name} create {code}: {created.status_code} {created.text}")
                    return
                mine["products"][code] = created.json()
                if n % 3 == 0:
                    patched = client.patch(f"{PRODUCTS}{code}/", json={"productname": f"patched {name}"})
                    mine["products"][code] = patched.json()
                if n % 5 == 0:
                    assert client.delete(f"{PRODUCTS}{code}/").status_code == 204
                    del mine["products"][code]
                invalid = client.post(PRODUCTS, json={"productcode": code})  # refused by Connexion: no change
                if invalid.status_code != 400:
                    errors.append(f"{name}: an invalid create answered {invalid.status_code}")
        expected[name] = mine

    def read_default() -> None:
        with httpx.Client(base_url=live_origin, headers=API_KEY_HEADERS, timeout=30) as client:
            for _ in range(30):
                if client.get(PRODUCTS).json()["count"] != len(seed["products"]):
                    errors.append("the default state changed")

    threads = [threading.Thread(target=work, args=(name,)) for name in names]
    threads.append(threading.Thread(target=read_default))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    for name in names:
        got = state(http, name)
        assert by_key(got["products"], "productcode") == expected[name]["products"]
        assert {k: v for k, v in got.items() if k != "products"} == {k: v for k, v in seed.items() if k != "products"}
        listed = http.get(PRODUCTS, headers=in_session(name), params={"page_size": 1}).json()
        assert listed["count"] == len(expected[name]["products"])
        assert app.sessions is not None
        session = app.sessions.find(name)
        assert session is not None and list(session.store.inconsistencies()) == []
    assert state(http) == seed
    assert set(sessions(http)) == set(names)


def test_a_session_that_only_reads_holds_nothing(http: httpx.Client, state_url: str) -> None:
    reader = in_session("reader")
    assert http.get(LINES, headers=reader).status_code == 200
    assert http.get(f"{PRODUCTS}S10_1678/", headers=reader).status_code == 200
    assert http.get(f"{LINES}Classic Cars/products/", headers=reader).status_code == 200
    state(http, "reader")
    assert sessions(http)["reader"]["size"] == size_after(http, "reader", 0, state_url)
    assert http.patch(f"{PRODUCTS}S10_1678/", json={"productname": "x"}, headers=reader).status_code == 200
    listed = sessions(http)["reader"]
    assert listed["size"] == size_after(http, "reader", 1, state_url)
    assert listed["created"] <= listed["last_used"]


def test_the_cookie_names_a_session_for_a_browser_and_the_header_wins(http: httpx.Client) -> None:
    line = state(http)["productlines"][0]
    created = http.post(LINES, json={**line, "productline": "Cookie line"}, headers={"Cookie": "mock_session=web"})
    assert created.status_code == 201
    assert http.get(f"{LINES}Cookie line/", headers=in_session("web")).status_code == 200
    both = {"Cookie": "theme=dark; mock_session=web", **in_session("other")}
    assert http.get(f"{LINES}Cookie line/", headers=both).status_code == 404
    assert http.get(f"{LINES}Cookie line/").status_code == 404


@pytest.mark.parametrize("name", ["", "a b", "x" * 65, "é", "a/b"])
def test_a_bad_session_name_is_a_400_naming_the_header(http: httpx.Client, name: str) -> None:
    response = http.get(LINES, headers={"X-Mock-Session": name.encode("utf-8")})
    assert response.status_code == 400
    assert response.headers["content-type"] == "application/problem+json"
    assert "X-Mock-Session" in response.json()["detail"]
    assert sessions(http) == {}


def test_two_session_headers_are_a_400(http: httpx.Client) -> None:
    response = http.get(LINES, headers=[("X-Mock-Session", "a"), ("X-Mock-Session", "b")])
    assert response.status_code == 400
    assert "X-Mock-Session" in response.json()["detail"]


def test_idle_sessions_expire_and_come_back_fresh(state_url: str) -> None:
    with client_of(state=state_url, session_ttl=0.5) as http:
        line = state(http)["productlines"][0]
        assert http.post(LINES, json={**line, "productline": "Brief"}, headers=in_session("brief")).status_code == 201
        assert "brief" in sessions(http)
        time.sleep(0.8)
        assert sessions(http) == {}
        assert http.get(f"{LINES}Brief/", headers=in_session("brief")).status_code == 404


def test_the_registry_expires_by_its_clock_and_touching_keeps_a_session() -> None:
    now = [0.0]
    registry = SessionRegistry(lambda: MemoryStore(record_fields()), ttl=10, limit=5, clock=lambda: now[0])
    first = registry.store("a")
    registry.store("b")
    now[0] = 8
    assert registry.store("a") is first  # touched at 8
    now[0] = 12
    assert [session.name for session in registry.sessions()] == ["a"]
    now[0] = 17.5
    assert registry.store("a") is first
    now[0] = 29
    assert registry.sessions() == []
    assert registry.store("a") is not first


def test_the_number_of_sessions_is_bounded_with_a_429(state_url: str) -> None:
    with client_of(state=state_url, max_sessions=2) as http:
        assert http.get(LINES, headers=in_session("one")).status_code == 200
        assert http.get(LINES, headers=in_session("two")).status_code == 200
        refused = http.get(LINES, headers=in_session("three"))
        assert refused.status_code == 429
        assert refused.headers["content-type"] == "application/problem+json"
        assert "--max-sessions" in refused.json()["detail"] and "'three'" in refused.json()["detail"]
        assert http.get(LINES, headers=in_session("one")).status_code == 200  # existing ones go on
        assert http.delete("/__mock__/sessions/one").status_code == 204
        assert http.get(LINES, headers=in_session("three")).status_code == 200
        assert set(sessions(http)) == {"two", "three"}


def test_reset_delete_export_and_import_work_per_session(http: httpx.Client, state_url: str) -> None:
    seed = state(http)
    alone = {name: [] for name in seed} | {"productlines": seed["productlines"][:1]}
    assert http.put("/__mock__/state", json=alone, headers=in_session("imported")).status_code == 204
    exported = state(http, "imported")
    assert exported["productlines"] == alone["productlines"] and exported["products"] == []
    assert sessions(http)["imported"]["size"] == 1
    health = http.get("/__mock__/health", headers=in_session("imported")).json()
    assert health["counts"]["productlines"] == 1
    assert state(http) == seed
    assert state(http, "untouched") == seed

    assert http.post("/__mock__/reset", headers=in_session("imported")).status_code == 204
    assert state(http, "imported") == seed
    changed = http.patch(f"{LINES}Classic Cars/", json={"textdescription": "x"}, headers=in_session("b"))
    assert changed.status_code == 200
    assert state(http, "b") != seed
    assert http.post("/__mock__/sessions/b/reset").status_code == 204
    assert state(http, "b") == seed
    assert sessions(http)["b"]["size"] == size_after(http, "b", 0, state_url)

    assert http.delete("/__mock__/sessions/b").status_code == 204
    assert "b" not in sessions(http)
    for method, path in (("DELETE", "/__mock__/sessions/b"), ("POST", "/__mock__/sessions/b/reset")):
        missing = http.request(method, path)
        assert missing.status_code == 404 and "'b'" in missing.json()["detail"]
    assert state(http) == seed


def test_pagination_links_follow_the_sessions_own_count(http: httpx.Client) -> None:
    lines = state(http)["productlines"]
    size = len(lines)
    page = {"page_size": size}
    assert http.get(LINES, params=page).json()["next"] is None
    extra = {**lines[0], "productline": "Zz extra"}
    assert http.post(LINES, json=extra, headers=in_session("pages")).status_code == 201
    first = http.get(LINES, params=page, headers=in_session("pages")).json()
    assert first["count"] == size + 1 and first["next"] is not None
    second = http.get(first["next"], headers=in_session("pages")).json()
    assert [line["productline"] for line in second["results"]] == ["Zz extra"]
    assert second["previous"] is not None
    assert http.get(LINES, params=page).json()["next"] is None
    assert http.get(first["next"]).status_code == 404  # the default state has no second page


def test_fault_rules_and_the_journal_are_scoped_to_a_session(http: httpx.Client) -> None:
    rules = [{"fault": "status", "status": 503, "session": "flaky"}]
    assert http.put("/__mock__/faults", json=rules).status_code == 204
    assert http.get("/__mock__/faults").json()[0]["session"] == "flaky"
    assert http.get(LINES, headers=in_session("flaky")).status_code == 503
    assert http.get(LINES, headers=in_session("steady")).status_code == 200
    assert http.get(LINES).status_code == 200
    assert http.get(LINES, headers={"Cookie": "mock_session=flaky"}).status_code == 503

    flaky = http.get("/__mock__/requests", params={"session": "flaky"}).json()
    assert [(entry["session"], entry["status"]) for entry in flaky] == [("flaky", 503), ("flaky", 503)]
    assert all(entry["fault"]["fault"] == "status" for entry in flaky)
    assert http.get("/__mock__/requests/count", params={"session": "steady"}).json() == {"count": 1}
    unnamed = http.get("/__mock__/requests", params={"session": ""}).json()
    assert [entry["session"] for entry in unnamed] == [None]

    bad = http.put("/__mock__/faults", json=[{"fault": "drop", "session": "no spaces"}])
    assert bad.status_code == 400 and "session" in bad.json()["detail"]


def test_replicas_on_one_redis_share_their_sessions(redis_url: str) -> None:
    """A session made through one replica is the same session on the other: its writes, its listing,
    its reset and delete, and the limit, which counts the sessions of every replica."""
    with (
        serve(state=redis_url, max_sessions=2) as one_origin,
        serve(state=redis_url, max_sessions=2) as other_origin,
        httpx.Client(base_url=one_origin, headers=API_KEY_HEADERS) as one,
        httpx.Client(base_url=other_origin, headers=API_KEY_HEADERS) as other,
    ):
        line = {**state(one)["productlines"][0], "productline": "Shared"}
        created = one.post(LINES, json=line, headers=in_session("a"))
        assert created.status_code == 201
        assert other.get(f"{LINES}Shared/", headers=in_session("a")).json() == created.json()
        assert other.get(f"{LINES}Shared/").status_code == 404  # not in the default state
        assert one.get(f"{LINES}Shared/", headers=in_session("b")).status_code == 404  # nor in another session
        assert set(sessions(other)) == {"a", "b"}
        refused = other.get(LINES, headers=in_session("c"))
        assert refused.status_code == 429 and "2 sessions exist" in refused.json()["detail"]
        assert other.post("/__mock__/sessions/a/reset").status_code == 204
        assert one.get(f"{LINES}Shared/", headers=in_session("a")).status_code == 404
        assert one.delete("/__mock__/sessions/b").status_code == 204
        assert set(sessions(other)) == {"a"}
        assert other.get(LINES, headers=in_session("c")).status_code == 200


def test_a_redis_session_past_its_deadline_leaves_no_keys(redis_url: str) -> None:
    import redis

    with client_of(state=redis_url, session_ttl=0.3) as http:
        line = {**state(http)["productlines"][0], "productline": "Brief"}
        assert http.post(LINES, json=line, headers=in_session("brief")).status_code == 201
        keys = redis.Redis.from_url(redis_url).keys("{shop}:session:brief:*")
        assert keys
        time.sleep(0.5)
        assert sessions(http) == {}
        assert redis.Redis.from_url(redis_url).keys("{shop}:session:brief:*") == []


def test_session_names_are_checked_before_any_state_is_made() -> None:
    assert session_name([(b"accept", b"*/*")]) is None
    assert session_name([(b"cookie", b"a=1; mock_session=web-1")]) == "web-1"
    with pytest.raises(SessionError) as refused:
        session_name([(b"x-mock-session", b"a;b")])
    assert refused.value.status == 400


def test_the_session_flags_build_the_settings() -> None:
    settings = parse_settings(["--session-ttl", "2.5", "--max-sessions", "7"])
    assert (settings.session_ttl, settings.max_sessions) == (2.5, 7)
    assert parse_settings(["--session-ttl", "0.001"]).session_ttl == 0.001
    # Redis keeps an expiry in whole milliseconds: 0.0001 was one that ended at once, 1e300 a script's error.
    ttls = ("0", "0.0001", "nan", "inf", "1e300", str(2**31))
    for bad in (*(["--session-ttl", ttl] for ttl in ttls), ["--max-sessions", "-1"]):
        with pytest.raises(SystemExit) as exit_info:
            parse_settings(bad)
        assert exit_info.value.code == 2


def test_a_steered_write_is_computed_on_the_sessions_state_and_changes_nothing(
    http: httpx.Client, state_url: str
) -> None:
    line = {**state(http)["productlines"][0], "productline": "Steered"}
    steer = {**in_session("steer"), "Prefer": "code=201"}
    assert http.post(LINES, json=line, headers=in_session("steer")).status_code == 201
    assert http.post(LINES, json=line, headers=steer).status_code == 400  # it would conflict in the session
    assert http.post(LINES, json=line, headers={"Prefer": "code=201"}).status_code == 201  # not in the default
    assert http.get(f"{LINES}Steered/").status_code == 404
    assert sessions(http)["steer"]["size"] == size_after(http, "steer", 1, state_url)
