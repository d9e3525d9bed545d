"""Fixtures: a fresh mock per test (factories, not globals), in-process and over real HTTP.

`api` is parametrized over both transports, so a test written once runs through the in-process
client and through a real uvicorn server on a free loopback port.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from starlette.testclient import TestClient

from contract_tests.outcome.step_summary import VARIABLE
from mock_server.app import MockApp, create_app
from mock_server.settings import DEFAULT_API_KEY, MEMORY, Settings
from tests.support.browser import ENGINES, launched_chromium
from tests.support.elsewhere import Collector
from tests.support.live import TRUSTED, running
from tests.support.redis_server import redis_server

API_KEY_HEADERS = {"X-API-Key": DEFAULT_API_KEY}
BACKEND = "/shop/api/v1"
GATEWAY = "/customers/v1"
TOKEN_PATH = "/realms/shop/protocol/openid-connect/token"
DEV_CLIENT = {"grant_type": "client_credentials", "client_id": "shop-dev", "client_secret": "shop-dev-secret"}
WORKERS_PER_CORE = "SHOP_WORKERS_PER_CORE"
"""The variable `-n auto` reads: pytest-xdist workers per core (1 unless set; tox's default run sets 2)."""


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """Workers for `-n auto`: `SHOP_WORKERS_PER_CORE` per core.

    A third of the default run's wall time is tests waiting: deadlines, trickled bodies, servers starting.
    A second worker per core fills it (on 2 cores, 438 s became 323 s). The whole runs of the other
    environments keep one worker per core, since their timing is what some of them measure."""
    text = os.environ.get(WORKERS_PER_CORE, "1")
    if not (text.isascii() and text.isdigit()) or not 1 <= int(text) <= 8:
        raise pytest.UsageError(f"{WORKERS_PER_CORE}={text!r}: a whole number from 1 to 8")
    return int(text) * (os.cpu_count() or 1)


ON_REDIS = "in-process, state in Redis"  # an `api` parameter a module may add: the same tests on the Redis store


@pytest.fixture
def state(request: pytest.FixtureRequest) -> str:
    """Where the app's state lives: in memory, or in the session's redis-server for `api` ON_REDIS."""
    callspec = getattr(request.node, "callspec", None)
    if callspec is not None and callspec.params.get("api") == ON_REDIS:
        url: str = request.getfixturevalue("redis_url")
        return url
    return MEMORY


@pytest.fixture
def app(state: str) -> MockApp:
    return create_app(Settings(state=state))


@pytest.fixture
def client(app: MockApp) -> Iterator[TestClient]:
    """In-process client, authenticated with the default API key."""
    with TestClient(app, base_url="http://testserver", headers=API_KEY_HEADERS) as test_client:
        yield test_client


@pytest.fixture
def live_origin(app: MockApp) -> Iterator[str]:
    """The same fresh app, served by uvicorn on a free loopback port."""
    with running(app) as origin:
        yield origin


@pytest.fixture
def http(live_origin: str) -> Iterator[httpx.Client]:
    """A real HTTP client to the live mock, authenticated with the default API key."""
    with httpx.Client(base_url=live_origin, headers=API_KEY_HEADERS, timeout=30, verify=TRUSTED) as http_client:
        yield http_client


@pytest.fixture(params=["in-process", "http"])
def api(request: pytest.FixtureRequest) -> httpx.Client:
    """The mock through each transport, authenticated with the default API key."""
    return transport(request)


def transport(request: pytest.FixtureRequest) -> httpx.Client:
    """The client an `api` parameter names (ON_REDIS: in process)."""
    fixture = "http" if request.param == "http" else "client"
    transport_client: httpx.Client = request.getfixturevalue(fixture)
    return transport_client


def fetch_token(api: httpx.Client, **form: str) -> str:
    """An access token from the mock's identity realm (client_credentials unless told otherwise)."""
    response = api.post(TOKEN_PATH, data={**DEV_CLIENT, **form})
    assert response.status_code == 200, response.text
    token: str = response.json()["access_token"]
    return token


@pytest.fixture(scope="session")
def redis_server_url() -> Iterator[str]:
    """One real redis-server for the session (tests/support/redis_server.py: skipped where it is missing)."""
    with redis_server() as url:
        yield url


@pytest.fixture
def redis_url(redis_server_url: str) -> str:
    """The session's redis-server, emptied for this test."""
    import redis

    redis.Redis.from_url(redis_server_url).flushdb()
    return redis_server_url


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    """Debian's Chromium, headless, driven by Playwright (tests/support/browser.py)."""
    yield from launched_chromium()


@pytest.fixture(scope="module", params=sorted(ENGINES))
def browser(request: pytest.FixtureRequest) -> Iterator[Any]:
    """Each engine in turn, the test id naming it: Debian's Chromium, and its Firefox ESR over WebDriver
    BiDi (tests/support/browser.py)."""
    yield from ENGINES[request.param]()


@pytest.fixture(autouse=True)
def _no_job_summary(monkeypatch: pytest.MonkeyPatch) -> None:
    """A suite's run in a test (in process, or a subprocess inheriting the environment) would append its
    Markdown summary to the GitHub job summary of the CI running the tests; a test that wants one sets
    the variable itself."""
    monkeypatch.delenv(VARIABLE, raising=False)


@pytest.fixture
def collector() -> Iterator[Collector]:
    """A server on another loopback port standing for a host the user never named: it must receive nothing."""
    listening = Collector()
    yield listening
    listening.close()
