"""Probes and metrics of the shared mock (issue 39), over real HTTP: the probes need no token and
reveal nothing else; the metrics of `--workers 2` and of two replicas of one Redis state, parsed
with prometheus_client's parser, count exactly the requests sent. Each mock is a real `shop-mock`
process on a free loopback port."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
from prometheus_client.parser import text_string_to_metric_families

from mock_server.app import create_app
from mock_server.control.faults.redis import RETRY_S
from mock_server.ops.tally import TALLY
from mock_server.settings import Settings
from tests.conftest import API_KEY_HEADERS, BACKEND
from tests.support.live import TRUSTED, running
from tests.support.ports import free_port
from tests.support.redis_server import redis_server
from tests.support.zoo.process import serving

TOKEN = "metrics-token"
AUTHORIZED = {"Authorization": f"Bearer {TOKEN}"}
OPERATION = "list_product_lines"
LIST_CALL = "counted_page"  # the store's call a list of OPERATION makes


@contextlib.contextmanager
def shop_mock(log: Path, *options: str) -> Iterator[str]:
    """The origin of `shop-mock` with `options` and the admin token, once its liveness probe answers."""
    port = free_port()
    origin = f"http://127.0.0.1:{port}"
    command = [sys.executable, "-m", "mock_server", "--port", str(port), "--admin-token", TOKEN, *options]
    with serving(command, log, f"{origin}/__mock__/livez"):
        yield origin


def send_each_on_its_own_connection(origin: str, count: int) -> None:
    """`count` requests of `OPERATION`, each on a new connection, a little apart (so that every worker takes
    some: see `worker_pids`)."""
    for _ in range(count):
        assert httpx.get(f"{origin}{BACKEND}/productlines/", headers=API_KEY_HEADERS, verify=TRUSTED).status_code == 200
        time.sleep(0.01)


def requests_counted(origin: str) -> tuple[float, float]:
    """(requests of `OPERATION` answered 200, the count of its duration histogram) in a scrape."""
    scraped = httpx.get(f"{origin}/__mock__/metrics", headers=AUTHORIZED)
    assert scraped.status_code == 200 and scraped.headers["content-type"].startswith("text/plain")
    counted = observed = 0.0
    for family in text_string_to_metric_families(scraped.text):
        for sample in family.samples:
            if sample.labels.get("operation") != OPERATION:
                continue
            if sample.name == "shop_mock_requests_total" and sample.labels["status"] == "200":
                counted += sample.value
            if sample.name == "shop_mock_request_duration_seconds_count":
                observed += sample.value
    return counted, observed


def eventually_counted(origin: str, expected: int) -> tuple[float, float]:
    """The figures once they reach `expected` (another worker's come within a second), else the last."""
    deadline = time.monotonic() + 5
    figures = requests_counted(origin)
    while figures != (expected, expected) and time.monotonic() < deadline:
        time.sleep(0.2)
        figures = requests_counted(origin)
    return figures


def test_the_probes_answer_without_token_on_any_host_and_reveal_nothing_else(tmp_path: Path) -> None:
    with shop_mock(tmp_path / "mock.log", "--host", "127.0.0.1") as origin:
        for host in ("10.1.2.3:8000", "127.0.0.1:9000", "pod.cluster.local"):  # a pod's address, a mapped port
            live = httpx.get(f"{origin}/__mock__/livez", headers={"Host": host})
            ready = httpx.get(f"{origin}/__mock__/readyz", headers={"Host": host})
            assert (live.status_code, live.text, ready.status_code, ready.text) == (200, "up\n", 200, "ready\n")
            assert httpx.get(f"{origin}/__mock__/health", headers={"Host": host}).status_code in (401, 403)
            assert httpx.get(f"{origin}/__mock__/metrics", headers={"Host": host}).status_code in (401, 403)
        assert httpx.post(f"{origin}/__mock__/livez").status_code == 405
        assert httpx.get(f"{origin}/__mock__/requests", headers=AUTHORIZED).json() == []  # probes go unrecorded


def test_readiness_follows_redis(tmp_path: Path) -> None:
    with redis_server() as url, shop_mock(tmp_path / "mock.log", "--state", url) as origin:
        assert httpx.get(f"{origin}/__mock__/readyz").text == "ready\n"
        import redis

        redis.Redis.from_url(url).shutdown(nosave=True)
        stopped = httpx.get(f"{origin}/__mock__/readyz", timeout=10)
        assert (stopped.status_code, stopped.text) == (503, "not ready\n")
        assert httpx.get(f"{origin}/__mock__/livez").text == "up\n"


def test_two_workers_are_counted_exactly(tmp_path: Path) -> None:
    with redis_server() as url, shop_mock(tmp_path / "mock.log", "--state", url, "--workers", "2") as origin:
        send_each_on_its_own_connection(origin, 30)
        assert eventually_counted(origin, 30) == (30, 30)
        worker_pids(origin)  # both workers answer, so the sum above is of both


def test_two_replicas_of_one_state_are_counted_each_on_its_own(tmp_path: Path) -> None:
    with (
        redis_server() as url,
        shop_mock(tmp_path / "a.log", "--state", url, "--replica-name", "a") as first,
        shop_mock(tmp_path / "b.log", "--state", url, "--replica-name", "b") as second,
    ):
        send_each_on_its_own_connection(first, 7)
        send_each_on_its_own_connection(second, 4)
        assert requests_counted(first) == (7, 7)
        assert requests_counted(second) == (4, 4)
        figures = {
            family.name: family.samples[0].value
            for family in text_string_to_metric_families(
                httpx.get(f"{first}/__mock__/metrics", headers=AUTHORIZED).text
            )
            if family.name in ("shop_mock_sessions", "shop_mock_journal_entries")
        }
        assert figures == {"shop_mock_sessions": 0, "shop_mock_journal_entries": 11}  # the shared journal


def test_each_request_is_counted_once_whichever_way_it_takes(tmp_path: Path) -> None:
    """A plain request (the bypass, from the app's entry, its journal telling the observer) and one
    with an `Origin` (Connexion's stack, the observer layer) are each counted once, with their
    status and duration."""
    with shop_mock(tmp_path / "mock.log") as origin:
        lines = f"{origin}{BACKEND}/productlines/"
        for _ in range(3):
            assert httpx.get(lines, headers=API_KEY_HEADERS).status_code == 200
        assert httpx.get(lines, headers=API_KEY_HEADERS | {"Origin": "http://localhost:3000"}).status_code == 200
        assert httpx.get(f"{lines}No%20Such%20Line/", headers=API_KEY_HEADERS).status_code == 404
        scraped = httpx.get(f"{origin}/__mock__/metrics", headers=AUTHORIZED).text
    counted = {
        (
            sample.name,
            sample.labels.get("operation"),
            sample.labels.get("status", sample.labels.get("le")),
        ): sample.value
        for family in text_string_to_metric_families(scraped)
        for sample in family.samples
        if family.name.startswith("shop_mock_request")
    }
    assert counted[("shop_mock_requests_total", OPERATION, "200")] == 4
    assert counted[("shop_mock_request_duration_seconds_count", OPERATION, None)] == 4
    assert counted[("shop_mock_request_duration_seconds_bucket", OPERATION, "+Inf")] == 4
    assert counted[("shop_mock_requests_total", "get_product_line", "404")] == 1


def test_a_plain_request_before_the_stack_is_built_is_counted_once() -> None:
    """The first request of a fresh mock goes through Connexion's stack (the bypass is found in it
    only then): the observer layer counts it, and the bypass inside does not count it again."""
    rows = TALLY.snapshot()  # this process's other mocks: the histogram counts every status, the counter 200
    ok_before = sum(rows.get((OPERATION, "200"), [0.0])[1:])
    all_before = sum(sum(row[1:]) for (operation, _), row in rows.items() if operation == OPERATION)
    with running(create_app(Settings(admin_token=TOKEN))) as origin:
        for _ in range(3):  # the first one builds the stack
            assert (
                httpx.get(f"{origin}{BACKEND}/productlines/", headers=API_KEY_HEADERS, verify=TRUSTED).status_code
                == 200
            )
        assert requests_counted(origin) == (ok_before + 3, all_before + 3)


def scraped_samples(origin: str, name: str) -> dict[str, float]:
    """The samples named `name` in a scrape, by their label values joined with `/`."""
    scraped = httpx.get(f"{origin}/__mock__/metrics", headers=AUTHORIZED, timeout=10)
    assert scraped.status_code == 200, scraped.text
    return {
        "/".join(sample.labels.values()): sample.value
        for family in text_string_to_metric_families(scraped.text)
        for sample in family.samples
        if sample.name == name
    }


def test_each_replica_counts_its_own_redis_calls_and_errors(tmp_path: Path) -> None:
    """Two replicas of one Redis state: each times the Redis calls of the requests it served and
    counts their failures, none of the other's; a request Redis fails is a 503 and one error."""
    with (
        redis_server() as url,
        shop_mock(tmp_path / "a.log", "--state", url, "--replica-name", "a") as first,
        shop_mock(tmp_path / "b.log", "--state", url, "--replica-name", "b") as second,
    ):
        sent = {first: 3, second: 1}
        timed = {origin: redis_calls_timed(origin) for origin in sent}
        for origin, count in sent.items():
            send_each_on_its_own_connection(origin, count)
        for origin, count in sent.items():
            now = redis_calls_timed(origin)
            grown = {call: value - timed[origin].get(call, 0) for call, value in now.items()}
            assert {call: value for call, value in grown.items() if value} == {LIST_CALL: count, "sessions": 1}
        import redis

        redis.Redis.from_url(url).shutdown(nosave=True)
        for origin, count in ((first, 2), (second, 1)):
            for turn in range(count):
                time.sleep(RETRY_S * bool(turn))  # a replica asks Redis again only `RETRY_S` after it failed
                answer = httpx.get(f"{origin}{BACKEND}/productlines/", headers=API_KEY_HEADERS, timeout=10)
                assert answer.status_code == 503, answer.text
        errors = {origin: scraped_samples(origin, "shop_mock_redis_errors_total") for origin in sent}
    failed = {origin: {call: value for call, value in errors[origin].items() if value} for origin in sent}
    assert failed == {first: {"faults": 2}, second: {"faults": 1}}  # the first call of a request: its faults


def redis_calls_timed(origin: str) -> dict[str, float]:
    """The Redis calls `origin` timed (`shop_mock_redis_call_duration_seconds`), by call."""
    return scraped_samples(origin, "shop_mock_redis_call_duration_seconds_count")


def worker_pids(origin: str, within: float = 10) -> set[str]:
    """The process ids of the workers behind `origin` (each `replica` is HOST:PID), once both answered
    within `within` seconds. A request the listening socket holds while the supervisor replaces its
    workers is tried again: on a loaded machine a new worker takes seconds to start. The workers share
    one listening socket, and a worker already waiting in accept may take every connection that comes
    quickly after another, so the probes pause a little for the other to get its turn."""
    seen: set[str] = set()
    deadline = time.monotonic() + within
    while len(seen) < 2:
        assert time.monotonic() < deadline, f"one worker answered every connection: {seen}"
        try:
            health = httpx.get(f"{origin}/__mock__/health", headers=AUTHORIZED, timeout=10, verify=TRUSTED)
        except httpx.TransportError:
            continue
        seen.add(health.json()["replica"].rsplit(":", 1)[1])
        time.sleep(0.01)
    return seen


def streams_open(origin: str) -> float:
    """`shop_mock_dashboard_streams` in a scrape."""
    return scraped_samples(origin, "shop_mock_dashboard_streams")[""]


def test_dashboard_streams_stay_counted_right_when_workers_die(tmp_path: Path) -> None:
    """A worker killed with its streams open (SIGKILL: it cannot count them down) leaves none in the
    figure once the supervisor has replaced it."""
    with (
        redis_server() as url,
        shop_mock(tmp_path / "mock.log", "--state", url, "--workers", "2") as origin,
        contextlib.ExitStack() as streams,
    ):
        for _ in range(3):
            client = streams.enter_context(httpx.Client(base_url=origin, headers=AUTHORIZED, timeout=10))
            opened = streams.enter_context(client.stream("GET", "/__mock__/ui/stream"))
            assert opened.status_code == 200
        assert streams_open(origin) == 3
        killed = worker_pids(origin)
        for pid in killed:
            os.kill(int(pid), signal.SIGKILL)
        deadline = time.monotonic() + 60
        while not worker_pids(origin, within=60).isdisjoint(killed) or streams_open(origin) != 0:
            assert time.monotonic() < deadline, f"{streams_open(origin)} streams still counted after the workers died"
            time.sleep(0.2)
        with (
            httpx.Client(base_url=origin, headers=AUTHORIZED, timeout=10) as client,
            client.stream("GET", "/__mock__/ui/stream"),
        ):
            assert streams_open(origin) == 1
