"""The Redis store across processes: replicas on one real redis-server agree, seed once, survive
restarts, and neither concurrent writers nor a replica killed mid-write break a rule of the state.

The same API and store tests as the in-memory store's run on it too (tests/mock_server/state/test_store.py,
tests/mock_server/api/test_operations.py, tests/mock_server/control/test_admin.py); these are the ones only a shared
state needs.
"""

from __future__ import annotations

import contextlib
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st
from starlette.testclient import TestClient

from mock_server.app import create_app
from mock_server.arguments import parse_settings
from mock_server.cli import banner, main
from mock_server.settings import DEFAULT_FIXTURES, MEMORY, Settings
from mock_server.spec.schemas import load_spec
from mock_server.state.fixtures import read_fixtures, record_fields
from mock_server.state.memory import MemoryStore
from mock_server.state.redis.layout import END, owner_prefix, token
from mock_server.state.store import Dataset, NotFound, StateError
from shop_contract.document import dereference
from tests.conftest import API_KEY_HEADERS, BACKEND, DEV_CLIENT, GATEWAY, TOKEN_PATH
from tests.mock_server.api.test_operations import CUSTOMER, PRODUCT
from tests.mock_server.state.test_store import line
from tests.mock_server.state.test_store import product as product_record
from tests.support.live import TRUSTED, running
from tests.support.ports import free_port
from tests.support.redis_server import redis_server

FIELDS = record_fields()
PRODUCTS = f"{BACKEND}/products/"
LINES = f"{BACKEND}/productlines/"
SLOW_LOOKUP_S = 10
"""A name lookup that does not answer: a request that waits for one takes this long, one that does not far less."""


@given(st.lists(st.integers(-(10**30), 10**30), unique=True, max_size=8) | st.lists(st.text(), unique=True, max_size=8))
def test_tokens_sort_as_their_identifiers(keys: list[Any]) -> None:
    assert sorted(keys, key=token) == sorted(keys)


@given(st.text(), st.text(), st.text() | st.integers())
def test_an_owners_index_range_holds_its_own_members_only(owner: str, other: str, child: Any) -> None:
    member = owner_prefix(token(other)) + token(child)
    prefix = owner_prefix(token(owner))
    assert (prefix <= member < prefix + END) == (owner == other)


def open_redis_store(url: str, seed: Callable[[], Dataset]) -> Any:
    from mock_server.state.redis.store import RedisStore

    return RedisStore.open(url, FIELDS, seed)


def test_a_replica_joins_a_seeded_state_without_reading_the_fixtures(redis_url: str) -> None:
    first = open_redis_store(redis_url, lambda: {"productlines": [line("Cars")]})
    first.create("productlines", line("Boats"))

    def unreadable() -> Dataset:
        raise AssertionError("a joining replica read the fixtures")

    second = open_redis_store(redis_url, unreadable)
    assert [r["productline"] for r in second.page("productlines", 0, 10)] == ["Boats", "Cars"]
    second.reset()
    assert [r["productline"] for r in first.page("productlines", 0, 10)] == ["Cars"]


def test_replicas_starting_together_seed_once(redis_url: str) -> None:
    calls = []

    def slow_seed() -> Dataset:
        calls.append(threading.get_ident())

        def lines() -> Iterator[dict[str, Any]]:
            for name in ("Boats", "Cars", "Planes"):
                time.sleep(0.05)
                yield line(name)

        return {"productlines": lines()}

    with ThreadPoolExecutor(4) as pool:
        stores = list(pool.map(lambda _: open_redis_store(redis_url, slow_seed), range(4)))
    assert len(calls) == 1
    assert all(store.count("productlines") == 3 for store in stores)
    assert list(stores[0].inconsistencies()) == []


def test_a_replica_that_gets_the_lock_after_another_seeded_joins_without_seeding(redis_url: str) -> None:
    """The window the test above meets now and then: a replica reads no marker, another seeds and lets the
    lock go, and then the first takes the lock. It must find the marker then, not read the fixtures again."""
    from mock_server.state.redis.layout import SEEDED
    from mock_server.state.redis.store import RedisStore

    seeded: list[str] = []

    def seeding(name: str) -> Callable[[], Dataset]:
        def seed() -> Dataset:
            seeded.append(name)
            return {"productlines": [line(name)]}

        return seed

    class Late(RedisStore):
        """A replica whose first read of the marker is followed, before it locks, by another's whole seed."""

        def _join(self, url: str, seed: Callable[[], Dataset]) -> None:
            read = self.bulk.get

            def get(name: Any) -> Any:
                value = read(name)
                if name == SEEDED and value is None and not seeded:
                    open_redis_store(url, seeding("Cars"))
                return value

            self.bulk.get = get  # type: ignore[method-assign]
            super()._join(url, seed)

    late = Late.open(redis_url, FIELDS, seeding("Boats"))
    assert seeded == ["Cars"]
    assert [record["productline"] for record in late.page("productlines", 0, 10)] == ["Cars"]


def test_a_failed_import_leaves_no_keys_behind(redis_url: str) -> None:
    import redis

    store = open_redis_store(redis_url, lambda: {"productlines": [line("Cars")]})
    keys = set(redis.Redis.from_url(redis_url).keys())

    def failing() -> Iterator[dict[str, Any]]:
        yield line("Boats")
        raise ValueError("unreadable")

    with pytest.raises(ValueError, match="unreadable"):
        store.replace_all({"productlines": failing()})
    assert set(redis.Redis.from_url(redis_url).keys()) == keys


def test_a_state_written_with_another_layout_is_refused(redis_url: str) -> None:
    from mock_server.state.redis.store import RedisStore

    open_redis_store(redis_url, dict)
    other = {**FIELDS, "productlines": (*FIELDS["productlines"], "colour")}
    with pytest.raises(StateError, match="another record layout"):
        RedisStore.open(redis_url, other, dict)


def test_options_select_the_state_and_the_workers() -> None:
    settings = parse_settings(["--state", "redis://10.0.0.1:6380/2", "--workers", "3"])
    assert (settings.state, settings.workers) == ("redis://10.0.0.1:6380/2", 3)
    assert (parse_settings([]).state, parse_settings([]).workers) == (MEMORY, 1)
    with pytest.raises(SystemExit) as exit_info:
        parse_settings(["--workers", "0"])
    assert exit_info.value.code == 2


@pytest.mark.parametrize(
    "argv",
    [
        ["--state", f"redis://127.0.0.1:{free_port()}/0"],  # nothing listens there
        ["--state", "http://localhost/"],
        ["--workers", "2"],  # in memory, every worker would have its own state
    ],
)
def test_an_unusable_state_is_one_line_and_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("shop-mock: error:")


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (f"redis://:s3cret@127.0.0.1:{free_port()}/0", "redis://:***@127.0.0.1:"),  # nothing listens there
        ("redis://user:s3cret@[::1", "redis://user:***@[::1: Invalid IPv6 URL"),
        ("unix:///nowhere/redis.sock?db=0&password=s3cret", "unix:///nowhere/redis.sock?db=0&password=***"),
        ("http://s3cret@localhost/", "--state http://***@localhost/: expected memory"),
    ],
    ids=["nothing-listens", "not-a-url", "unix-query", "not-redis"],  # The same in every xdist worker.
)
def test_the_password_of_a_state_is_never_shown(url: str, shown: str, capsys: pytest.CaptureFixture[str]) -> None:
    """A state's URL comes with its password from a deployment's secrets; an error line went to its logs whole."""
    assert main(["--state", url]) == 2
    err = capsys.readouterr().err
    assert shown in err and "s3cret" not in err, err
    assert "s3cret" not in banner(parse_settings(["--state", url]), 8000, "/shop/api/v1", "/customers/v1")


# --- replicas as real processes ---------------------------------------------------------------------


class Replica:
    """`python -m mock_server --state URL` in its own process group, on a free port."""

    def __init__(self, url: str, *extra: str) -> None:
        self.port = free_port()
        command = [sys.executable, "-m", "mock_server", "--state", url, "--port", str(self.port)]
        self.process = subprocess.Popen(
            [*command, "--log-level", "warning", *extra],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        self.http = httpx.Client(
            base_url=f"http://127.0.0.1:{self.port}", headers=API_KEY_HEADERS, timeout=30, verify=TRUSTED
        )

    def wait(self) -> Replica:
        deadline = time.monotonic() + 60
        while True:
            try:
                self.http.get("/__mock__/health")
                return self
            except httpx.TransportError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"replica did not start: {self.process.stderr.read()!r}") from None  # type: ignore[union-attr]
                time.sleep(0.1)

    def stop(self, sig: int = signal.SIGTERM) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, sig)
        self.process.wait(timeout=30)
        self.process.stderr.close()  # type: ignore[union-attr]
        self.http.close()


@contextlib.contextmanager
def replicas(url: str, count: int, *extra: str) -> Iterator[list[Replica]]:
    started = [Replica(url, *extra) for _ in range(count)]
    try:
        yield [replica.wait() for replica in started]
    finally:
        for replica in started:
            if replica.process.poll() is None:
                replica.stop()


def state_of(replica: Replica) -> dict[str, Any]:
    response = replica.http.get("/__mock__/state")
    assert response.status_code == 200
    state: dict[str, Any] = response.json()
    return state


def assert_sound(url: str) -> None:
    """Every index agrees with the records, every reference holds (read by a fresh client)."""
    assert list(open_redis_store(url, dict).inconsistencies()) == []


def test_two_replicas_answer_consistently(redis_url: str) -> None:
    with replicas(redis_url, 2) as (one, other):
        assert one.http.post(LINES, json=line("Hovercraft")).status_code == 201
        assert other.http.get(f"{LINES}Hovercraft/").json() == line("Hovercraft")
        assert other.http.post(PRODUCTS, json=product("S00_0001", "Hovercraft", 3)).status_code == 201
        for page in ("?page=1", "?page=2&page_size=7", "?page=4&page_size=20"):
            assert one.http.get(PRODUCTS + page).json()["results"] == other.http.get(PRODUCTS + page).json()["results"]
        assert other.http.delete(f"{LINES}Hovercraft/").status_code == 409
        assert one.http.delete(f"{PRODUCTS}S00_0001/").status_code == 204
        assert other.http.get(f"{PRODUCTS}S00_0001/").status_code == 404
        assert one.http.post("/__mock__/reset").status_code == 204
        assert other.http.get(f"{LINES}Hovercraft/").status_code == 404
        assert state_of(one) == state_of(other)


def product(code: str, line_name: str, stock: int) -> dict[str, Any]:
    return {**PRODUCT, "productcode": code, "productline": line_name, "quantityinstock": stock}


def writes(client: httpx.Client, seed: int, count: int) -> None:
    """A random burst of writes on a few product lines and products, every answer a 2xx or a 4xx."""
    chance = random.Random(seed)
    names = ["Boats", "Hovercraft", "Gliders", "Zeppelins"]
    for _ in range(count):
        code = f"S99_{chance.randrange(12):04d}"
        name = chance.choice(names)
        match chance.randrange(5):
            case 0:
                response = client.post(LINES, json=line(name))
            case 1:
                response = client.delete(f"{LINES}{name}/")
            case 2:
                response = client.post(PRODUCTS, json=product(code, name, chance.randrange(100)))
            case 3:
                response = client.patch(f"{PRODUCTS}{code}/", json={"productline": name})
            case _:
                response = client.delete(f"{PRODUCTS}{code}/")
        assert response.status_code < 500, response.text


def test_concurrent_writers_on_several_replicas_end_in_a_sound_state(redis_url: str) -> None:
    with replicas(redis_url, 2) as group, replicas(redis_url, 1, "--workers", "2") as (pooled,):
        clients = [replica.http for replica in [*group, pooled]]
        with ThreadPoolExecutor(6) as pool:
            list(pool.map(lambda seed: writes(clients[seed % 3], seed, 40), range(6)))
        assert_sound(redis_url)
        states = [state_of(replica) for replica in [*group, pooled]]
        assert states[0] == states[1] == states[2]
        for name, records in states[0].items():
            assert group[0].http.get("/__mock__/health").json()["counts"][name] == len(records)


def test_concurrent_updates_of_one_record_lose_none(redis_url: str) -> None:
    """Writers on two replicas each keep setting their own field of one product. An update computed
    from a stale read would put back another writer's older value: each writer reads its field back
    after every write, and at the end the product holds every writer's last value."""
    fields = {"productname": "name", "productscale": "scale", "productvendor": "vendor", "productdescription": "text"}
    with replicas(redis_url, 2) as group:
        url = f"{PRODUCTS}{group[0].http.get(PRODUCTS).json()['results'][0]['productcode']}/"

        def keep_setting(field: str, client: httpx.Client) -> str:
            for round_ in range(40):
                value = f"{fields[field]} {round_}"
                assert client.patch(url, json={field: value}).status_code == 200
                assert client.get(url).json()[field] == value, "an update was lost"
            return value

        with ThreadPoolExecutor(len(fields)) as pool:
            last = dict(zip(fields, pool.map(keep_setting, fields, [r.http for r in group] * 2), strict=True))
        assert {field: group[0].http.get(url).json()[field] for field in fields} == last


def test_restarting_every_replica_keeps_the_state(redis_url: str) -> None:
    """The replicas that come back (told to start empty: a seeded state is joined, never reseeded)."""
    with replicas(redis_url, 1) as (first,):
        writes(first.http, seed=7, count=40)
        before = state_of(first)
    with replicas(redis_url, 2, "--empty") as group:
        assert [state_of(replica) for replica in group] == [before, before]
        assert group[1].http.post("/__mock__/reset").status_code == 204
        assert state_of(group[0]) == MemoryStore(FIELDS, read_fixtures(DEFAULT_FIXTURES)).export()


def test_a_replica_killed_mid_write_leaves_no_half_applied_change(redis_url: str) -> None:
    with replicas(redis_url, 1) as (victim,):
        failures: list[BaseException] = []

        def burst(seed: int) -> None:
            with contextlib.suppress(httpx.TransportError):  # the replica dies under us: expected
                try:
                    writes(victim.http, seed, 400)
                except AssertionError as error:
                    failures.append(error)

        threads = [threading.Thread(target=burst, args=(seed,)) for seed in range(4)]
        for thread in threads:
            thread.start()
        time.sleep(1.0)
        assert all(thread.is_alive() for thread in threads), "the burst ended before the kill"
        os.killpg(victim.process.pid, signal.SIGKILL)  # its client stays open until the bursts have ended:
        for thread in threads:  # closed under a burst, it would raise instead of meeting the dead replica
            thread.join(timeout=30)
        victim.stop(signal.SIGKILL)
        assert victim.process.returncode == -signal.SIGKILL
        assert failures == []
    assert_sound(redis_url)
    with replicas(redis_url, 1) as (survivor,):
        assert survivor.http.get(PRODUCTS).status_code == 200


def test_a_request_while_redis_is_down_is_a_503_problem() -> None:
    with redis_server() as url:
        client = TestClient(create_app(Settings(state=url)), headers=API_KEY_HEADERS, raise_server_exceptions=False)
        assert client.get(f"{PRODUCTS}S10_1678/").status_code == 200  # now in the replica's copy
    with client:
        for response in (
            client.get(PRODUCTS),
            client.get(f"{PRODUCTS}S10_1678/"),
            client.get(PRODUCTS, headers={"X-Mock-Session": "s"}),
            client.get("/__mock__/sessions"),
            client.post(LINES, json=line("Hovercraft")),
            client.delete(f"{LINES}Motorcycles/"),
        ):
            assert response.status_code == 503
            assert response.headers["content-type"] == "application/problem+json"
            assert "The shared state did not answer" in response.json()["detail"]


def commands_run(url: str) -> int:
    import redis

    return int(redis.Redis.from_url(url).info("stats")["total_commands_processed"])


def test_a_repeated_read_is_answered_from_the_replicas_copy(redis_url: str) -> None:
    dataset = {"productlines": [line("Cars")], "products": [product_record("S1", "Cars")]}
    store = open_redis_store(redis_url, lambda: dataset)
    reads: list[Callable[[], object]] = [
        lambda: store.get("products", "S1"),
        lambda: store.counted_page("products", 0, 10),
        lambda: store.count("productlines"),
        lambda: store.owned("products", "productline", "Cars", 0, 10),
    ]
    answers = [read() for read in reads]
    idle = -commands_run(redis_url) + commands_run(redis_url)  # what asking costs
    before = commands_run(redis_url)
    assert [read() for read in reads * 5] == answers * 5
    assert commands_run(redis_url) - before == idle, "a repeated read went to Redis"
    store.update("products", "S1", {"quantityinstock": 7})  # a write of its own drops the copy
    assert store.get("products", "S1")["quantityinstock"] == 7


def test_a_replica_without_a_live_tracking_connection_reads_from_redis(redis_url: str) -> None:
    import redis

    writer = open_redis_store(redis_url, lambda: {"productlines": [line("Cars")]})
    reader = open_redis_store(redis_url, dict)
    assert reader.get("productlines", "Cars")["image"] is None
    redis.Redis.from_url(redis_url).client_kill_filter(_type="pubsub")  # no more invalidations
    writer.update("productlines", "Cars", {"image": "lost"})
    assert reader.get("productlines", "Cars")["image"] == "lost"
    redis.Redis.from_url(redis_url).flushdb()  # a flush drops the copy too
    with pytest.raises(NotFound):
        reader.get("productlines", "Cars")


def test_a_slow_name_lookup_for_a_new_tracking_connection_stops_no_read(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tracking connection lost is opened again by a thread: its host name lookup (a DNS server
    that does not answer, as podman's while a container joins the network) stopped the event loop,
    every request of the replica with it (found with two replicas in containers behind nginx)."""
    import socket

    import redis

    from mock_server.state.redis.copy import RETRY_S

    store = open_redis_store(redis_url, lambda: {"productlines": [line("Cars")]})
    assert store.get("productlines", "Cars")["image"] is None
    redis.Redis.from_url(redis_url).client_kill_filter(_type="pubsub")  # the tracking connection
    store.get("productlines", "Cars")  # finds it lost
    time.sleep(RETRY_S)
    lookup = socket.getaddrinfo

    def slow_lookup(*args: Any, **kwargs: Any) -> Any:
        time.sleep(SLOW_LOOKUP_S)
        return lookup(*args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", slow_lookup)
    started = time.monotonic()
    assert store.get("productlines", "Cars")["image"] is None
    assert time.monotonic() - started < SLOW_LOOKUP_S / 2, "a read waited for the tracking connection's name lookup"


def test_a_replicas_first_requests_wait_for_no_redis_connection(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every Redis client a request uses is connected before the replica serves: a connection made
    during a request looked its host name up on the event loop, and a DNS server that does not
    answer (podman's while a container joins the network) stopped every request of the replica."""
    import socket

    client = TestClient(create_app(Settings(state=redis_url)), headers=API_KEY_HEADERS)
    lookup = socket.getaddrinfo

    def slow_lookup(*args: Any, **kwargs: Any) -> Any:
        time.sleep(SLOW_LOOKUP_S)
        return lookup(*args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", slow_lookup)
    started = time.monotonic()
    assert client.get(f"{PRODUCTS}S10_1678/").status_code == 200
    assert client.get(PRODUCTS).status_code == 200
    assert client.post(LINES, json=line("Hovercraft")).status_code == 201
    assert time.monotonic() - started < SLOW_LOOKUP_S / 2, "a request waited for a Redis connection's name lookup"


def bearer(replica: Replica) -> dict[str, str]:
    response = replica.http.post(TOKEN_PATH, data=DEV_CLIENT)
    assert response.status_code == 200, response.text
    return {"Authorization": f"Bearer {response.json()['access_token']}"}


def answers_to(replica: Replica, headers: dict[str, str]) -> int:
    return replica.http.get(f"{GATEWAY}/customers/", headers={**headers, "X-API-Key": ""}).status_code


def test_a_token_issued_by_one_replica_verifies_on_every_other(redis_url: str, tmp_path: Path) -> None:
    """Each replica has a key file of its own; the realm's keys are shared through the state's Redis.
    Replicas behind one address share its issuer (`--issuer`), as they would behind a load balancer."""
    issuer = ["--issuer", "http://shop.example.test/realms/shop"]
    keys = [[*issuer, "--realm-key", str(tmp_path / f"keys-{n}.pem")] for n in range(3)]
    with replicas(redis_url, 1, *keys[0]) as (first,), replicas(redis_url, 1, *keys[1]) as (second,):
        token = bearer(first)
        assert answers_to(first, token) == answers_to(second, token) == 200
        assert answers_to(second, bearer(second)) == answers_to(first, bearer(second)) == 200
        assert (
            first.http.get("/realms/shop/protocol/openid-connect/certs").json()
            == second.http.get("/realms/shop/protocol/openid-connect/certs").json()
        )
    with replicas(redis_url, 1, *keys[2], "--rotate-realm-key") as (rotated,):
        fresh = bearer(rotated)
        assert answers_to(rotated, token) == answers_to(rotated, fresh) == 200  # the previous key still verifies
        kids = [key["kid"] for key in rotated.http.get("/realms/shop/protocol/openid-connect/certs").json()["keys"]]
        assert len(kids) == 2


HUGE_PAGES = [2**31, 2**53 - 1, 2**53 + 1, 2**62, 2**63 - 1]  # past Lua's exact integers, and Redis's


def list_urls() -> list[str]:
    """Every list of the spec (an operation with a `page` parameter), with an owner that exists."""
    spec = load_spec()
    owners = {"productline": "Classic%20Cars", "productcode": "S10_1678", "customernumber": "103"}
    urls = []
    for path, item in spec["paths"].items():
        parameters = dereference(item.get("get", {}).get("parameters", []), spec)
        if any(parameter["name"] == "page" for parameter in parameters):
            urls.append(BACKEND + re.sub(r"\{(\w+)\}", lambda match: owners[match[1]], path))
    return urls


def test_a_page_past_the_last_is_404_as_in_memory_however_large_its_number(redis_url: str) -> None:
    urls = list_urls()
    assert len(urls) == 7
    urls.append(f"{BACKEND}/customers/1/orders/")  # an owner that does not exist: 404 for it first
    session = {"X-Mock-Session": "pages"}  # a session's state is paged by the same scripts
    asked = [(url, {}) for url in urls] + [(url, session) for url in urls[:2]]
    with (
        running(create_app(Settings())) as origin,
        httpx.Client(base_url=origin, headers=API_KEY_HEADERS) as memory,
        replicas(redis_url, 1) as (replica,),
    ):
        for url, headers in asked:
            for page in HUGE_PAGES:
                for size in (1, 100):
                    query = {"page": page, "page_size": size}
                    expected = memory.get(url, params=query, headers=headers)
                    answer = replica.http.get(url, params=query, headers=headers)
                    assert expected.status_code == 404, (url, page, expected.text)
                    assert (answer.status_code, answer.json()) == (404, expected.json()), (url, page, size, headers)
            first = memory.get(url).json()
            assert replica.http.get(url).json().get("results") == first.get("results")  # the same data (or 404)
    assert_sound(redis_url)


def test_a_redis_error_is_a_503_with_a_stable_message_and_its_internals_only_in_the_log(redis_url: str) -> None:
    import redis

    from mock_server.control.journal.redis import ENTRIES
    from mock_server.state.redis.layout import LIVE, SESSIONS
    from mock_server.state.redis.store import UNAVAILABLE

    raw = redis.Redis.from_url(redis_url)
    with replicas(redis_url, 1) as (replica,):
        for key in (LIVE.order("products"), LIVE.rows("customers"), SESSIONS, ENTRIES):  # keys of the wrong type
            raw.delete(key)
            raw.set(key, "not what the mock wrote")
        for response in (
            replica.http.get(PRODUCTS),  # a script (PAGE)
            replica.http.get(f"{BACKEND}/customers/103/"),  # a command (HGET)
            replica.http.post(f"{BACKEND}/customers/", json=CUSTOMER),  # a write's script (CREATE)
            replica.http.get(f"{LINES}Motorcycles/", headers={"X-Mock-Session": "s"}),  # the sessions' script
            replica.http.get("/__mock__/sessions"),
            replica.http.get("/__mock__/requests"),  # the journal
        ):
            assert response.status_code == 503, response.text
            assert response.headers["content-type"] == "application/problem+json"
            assert response.json()["detail"] == UNAVAILABLE
        os.killpg(replica.process.pid, signal.SIGTERM)
        replica.process.wait(timeout=30)
        log = replica.process.stderr.read().decode()  # type: ignore[union-attr]
        replica.stop()
    assert "@user_script" in log and "WRONGTYPE" in log, log
