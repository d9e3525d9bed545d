"""Two replicas on one real redis-server behind a real nginx doing round-robin behave as one mock:
a counted fault fires its count in all, the dashboard's stream shows the other replica's requests,
the proxy's violations are listed by both, and a browser login runs with every step on the other
replica. Each replica is its own `python -m mock_server` process, as a platform team runs them.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from contract_tests.judge.domain import race_references as race_reference_checks
from contract_tests.judge.domain import races as race_checks
from mock_server.app import create_app
from mock_server.settings import Settings
from tests.conftest import API_KEY_HEADERS, BACKEND, TOKEN_PATH
from tests.support.live import running
from tests.support.ports import free_port
from tests.support.realm_login import REALM, Authorization, log_in
from tests.support.redis_server import redis_server
from tests.support.suite import credentials, shop_contract
from tests.support.zoo.round_robin import round_robin

pytestmark = pytest.mark.e2e  # replicas on a real redis-server behind a real nginx (tox -e e2e)

PRODUCTS = f"{BACKEND}/products/"
STREAM = "/__mock__/ui/stream"
NAMES = ("one", "two")


class Replica:
    """`python -m mock_server --state URL` on `host`:`port`, in its own process group."""

    def __init__(self, url: str, host: str, port: int, *extra: str) -> None:
        command = [sys.executable, "-m", "mock_server", "--state", url, "--host", host, "--port", str(port)]
        self.process = subprocess.Popen(
            [*command, "--log-level", "warning", *extra],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        self.http = httpx.Client(base_url=f"http://{host}:{port}", headers=API_KEY_HEADERS, timeout=30)

    def wait(self) -> None:
        deadline = time.monotonic() + 60
        while True:
            try:
                self.http.get("/__mock__/health")
                return
            except httpx.TransportError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"replica did not start: {self.process.stderr.read()!r}") from None  # type: ignore[union-attr]
                time.sleep(0.1)

    def stop(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGTERM)
        self.process.wait(timeout=30)
        self.process.stderr.close()  # type: ignore[union-attr]
        self.http.close()


@dataclass
class Cluster:
    replicas: dict[str, Replica]  # by --replica-name
    origin: str  # nginx's

    def client(self, **options: Any) -> httpx.Client:
        return httpx.Client(base_url=self.origin, timeout=30, **options)

    def journal(
        self, done: Callable[[list[dict[str, Any]]], bool], deadline: float, **filters: str
    ) -> list[dict[str, Any]]:
        """The shared journal's entries matching `filters` (read through `one`), read again until `done` holds
        of them or `deadline` (monotonic) passes: a replica records an exchange just after its last byte is sent,
        so the reader waits for it."""
        while True:
            entries: list[dict[str, Any]] = self.replicas["one"].http.get("/__mock__/requests", params=filters).json()
            if done(entries) or time.monotonic() > deadline:
                return entries
            time.sleep(0.05)

    def journaled(self, queries: dict[str, float], deadline: float) -> dict[str, str]:
        """The replica that served each of `queries` on `PRODUCTS`, once all came or by `deadline`."""

        def served(entries: list[dict[str, Any]]) -> dict[str, str]:
            return {entry["query"]: entry["replica"] for entry in entries if entry["query"] in queries}

        return served(self.journal(lambda entries: len(served(entries)) == len(queries), deadline, path=PRODUCTS))

    def served_by(self, wanted: int, **filters: str) -> list[str]:
        """The replica of each journal entry matching `filters`, by arrival, once `wanted` came (10 s at most)."""
        entries = self.journal(lambda entries: len(entries) >= wanted, time.monotonic() + 10, **filters)
        return [entry["replica"] for entry in sorted(entries, key=lambda entry: entry["at"])]


@contextlib.contextmanager
def cluster(directory: Path, *extra: str) -> Iterator[Cluster]:
    """Two replicas (`one`, `two`) on a fresh redis-server, behind nginx; the realm's issuer is nginx's.

    The replicas share one port, each on its own loopback address, as replicas on two hosts would."""
    with redis_server() as url:
        port, replica_port = free_port(), free_port()
        issuer = ("--issuer", f"http://127.0.0.1:{port}{REALM}")
        hosts = {name: f"127.0.0.{number + 2}" for number, name in enumerate(NAMES)}
        started = {
            name: Replica(url, hosts[name], replica_port, "--replica-name", name, *issuer, *extra) for name in NAMES
        }
        try:
            for replica in started.values():
                replica.wait()
            upstreams = [f"{host}:{replica_port}" for host in hosts.values()]
            with round_robin(port, upstreams, f"localhost:{replica_port}", directory) as origin:
                yield Cluster(started, origin)
        finally:
            for replica in started.values():
                if replica.process.poll() is None:
                    replica.stop()


@pytest.fixture(scope="module")
def two(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    with cluster(tmp_path_factory.mktemp("nginx")) as running_cluster:
        yield running_cluster


def test_a_counted_fault_set_through_one_replica_fails_its_count_over_both(two: Cluster) -> None:
    rule = {"operationId": "list_products", "fault": "status", "status": 503, "count": 3}
    assert two.replicas["one"].http.put("/__mock__/faults", json=[rule]).status_code == 204
    two.replicas["one"].http.delete("/__mock__/requests")
    with two.client(headers=API_KEY_HEADERS) as http:
        statuses = [http.get(PRODUCTS).status_code for _ in range(10)]
    assert statuses == [503] * 3 + [200] * 7  # the next three, whichever replica served them
    assert set(two.served_by(3, operationId="list_products", status="503")) == set(NAMES)
    assert [r["count"] for r in two.replicas["two"].http.get("/__mock__/faults").json()] == [0]
    assert two.replicas["two"].http.delete("/__mock__/faults").status_code == 204
    assert two.replicas["one"].http.get("/__mock__/faults").json() == []


class Stream:
    """A dashboard stream read in a thread, up to `wanted` exchanges, each with when it arrived."""

    def __init__(self, http: httpx.Client, wanted: int) -> None:
        self.http = http
        self.wanted = wanted
        self.exchanges: list[tuple[float, dict[str, Any]]] = []
        self.opened = threading.Event()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()
        assert self.opened.wait(10), "the stream did not open"

    def _read(self) -> None:
        """Until `wanted` exchanges came, or the client is closed under it (the end of the test)."""
        with contextlib.suppress(httpx.HTTPError, httpx.StreamError), self.http.stream("GET", STREAM) as response:
            for line in response.iter_lines():
                if line.startswith(": open") and response.status_code == 200:
                    self.opened.set()
                elif line.startswith("data: "):
                    self.exchanges.append((time.monotonic(), json.loads(line[len("data: ") :])))
                    if len(self.exchanges) == self.wanted:
                        return

    def seen(self, query: str, replica: str, deadline: float) -> float | None:
        """When an exchange of `PRODUCTS?query` served by `replica` arrived, waiting until `deadline` (monotonic)."""
        while True:
            for at, exchange in list(self.exchanges):
                if (exchange["path"], exchange["query"], exchange["replica"]) == (PRODUCTS, query, replica):
                    return at
            if time.monotonic() > deadline:
                return None
            time.sleep(0.01)


def test_a_dashboard_stream_through_one_replica_shows_a_request_served_by_the_other_within_a_second(
    two: Cluster,
) -> None:
    with two.client() as watcher, two.client(headers=API_KEY_HEADERS) as http:
        stream = Stream(watcher, wanted=2)  # on one replica, through nginx
        with contextlib.closing(watcher):
            answered = {}
            for page in ("page=1", "page=2"):  # round-robin: one request on each replica
                assert http.get(f"{PRODUCTS}?{page}").status_code == 200
                answered[page] = time.monotonic()
            served = two.journaled(answered, deadline=time.monotonic() + 10)
            assert sorted(served.values()) == sorted(NAMES)
            for page, name in served.items():
                arrived = stream.seen(page, name, answered[page] + 1.0)
                assert arrived is not None, f"no exchange served by {name} within 1 s: {stream.exchanges}"
    stream.thread.join(timeout=10)


def test_a_login_with_pkce_then_refresh_and_logout_each_step_on_the_other_replica(two: Cluster) -> None:
    two.replicas["one"].http.delete("/__mock__/requests")
    authorization = Authorization()
    with two.client(follow_redirects=False) as browser:
        code = log_in(browser, authorization)["code"]  # the login page from one replica, the form posted to the other
        tokens = browser.post(TOKEN_PATH, data=authorization.token_form(code))
        assert tokens.status_code == 200, tokens.text
        again = browser.post(TOKEN_PATH, data=authorization.token_form(code))
        assert again.json()["error_description"] == "Code not valid"  # redeemed once, on either replica
        refresh = {"grant_type": "refresh_token", "client_id": authorization.client_id}
        refreshed = browser.post(TOKEN_PATH, data={**refresh, "refresh_token": tokens.json()["refresh_token"]})
        assert refreshed.status_code == 200, refreshed.text
        reused = browser.post(TOKEN_PATH, data={**refresh, "refresh_token": tokens.json()["refresh_token"]})
        assert reused.json()["error_description"] == "Maximum allowed refresh token reuse exceeded"
        logout = browser.get(
            f"{REALM}/protocol/openid-connect/logout", params={"id_token_hint": refreshed.json()["id_token"]}
        )
        assert logout.status_code == 200, logout.text
        after = browser.post(TOKEN_PATH, data={**refresh, "refresh_token": refreshed.json()["refresh_token"]})
        assert after.json()["error_description"] == "Session not active"  # the logout is honoured by both
    steps = two.served_by(8)
    assert len(steps) == 8
    assert all(first != second for first, second in itertools.pairwise(steps)), steps


def test_violations_recorded_by_either_replica_are_listed_by_both(tmp_path: Path) -> None:
    with running(create_app(Settings())) as backend, cluster(tmp_path, "--proxy", backend) as proxies:
        with proxies.client(headers=API_KEY_HEADERS) as http:
            for _ in range(2):  # one on each replica
                answer = http.post(f"{BACKEND}/productlines/", json={"textdescription": "no identifier"})
                assert answer.status_code == 400  # the backend's own answer
        assert set(proxies.served_by(2, method="POST")) == set(NAMES)
        listed = [replica.http.get("/__mock__/violations").json() for replica in proxies.replicas.values()]
        assert listed[0] == listed[1]
        assert len(listed[0]) == 2 and {v["part"] for v in listed[0]} == {"request"}
        assert proxies.replicas["two"].http.delete("/__mock__/violations").status_code == 204
        assert proxies.replicas["one"].http.get("/__mock__/violations").json() == []


def test_two_replicas_behind_nginx_pass_every_check_of_concurrent_writes(two: Cluster, tmp_path: Path) -> None:
    """A PATCH, a create and a DELETE with references are each atomic across replicas (the Redis store's
    compare-and-set scripts), so the checks of concurrent writes, their races sent through nginx to both
    replicas, report nothing, and each one ran (its tries overlapped)."""
    races = [*race_checks.CHECKS, *race_reference_checks.CHECKS]
    args = ["--base-url", f"{two.origin}{BACKEND}", *credentials(two.origin), "--seed", "7", "--quiet"]
    outcome = shop_contract([*args, "--no-conformance", "--checks", *races], tmp_path)
    assert outcome.code == 0, outcome.stdout[-3000:] + outcome.stderr
    assert set(races) <= set(outcome.findings["exercised"])
