"""Fixtures: a fresh mock per test (factories, not globals), in-process and over real HTTP."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from starlette.testclient import TestClient

from mock_server.app import MockApp, create_app
from mock_server.settings import DEFAULT_API_KEY, Settings
from tests.live import running

API_KEY_HEADERS = {"X-API-Key": DEFAULT_API_KEY}


@pytest.fixture
def app() -> MockApp:
    return create_app(Settings())


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
    with httpx.Client(base_url=live_origin, headers=API_KEY_HEADERS, timeout=30) as http_client:
        yield http_client
