"""A request leaves nothing for the garbage collector.

Reference counting frees what a request made the moment it ends; a reference cycle waits for the
collector, whose passes then cost every request (a scope holding uvicorn's per-request object, which
holds the scope, cost a POST a tenth of its time: benchmarks/benchmark-history.md, "What a request
paid outside the ASGI stack"). The mock runs here under real uvicorn with its bounded protocol; each
kind of request, on the bypass and through the whole stack, is sent over a kept connection with the
collector off, and what a collection then finds unreachable must hold nothing of the server's.
"""

from __future__ import annotations

import gc
import http.client
import itertools
import json
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest

from mock_server.app import create_app
from mock_server.http.limits import Limits, uvicorn_options
from mock_server.settings import DEFAULT_API_KEY, Settings
from tests.mock_server.api.test_operations import PRODUCT
from tests.support.live import running

KEY = {"X-API-Key": DEFAULT_API_KEY}
PRODUCTS = "/shop/api/v1/products/"
SERVER_MODULES = ("uvicorn", "mock_server", "connexion", "starlette", "asyncio")
codes = itertools.count()


def new_product(code: str | None = None) -> bytes:
    """tests.mock_server.api.test_operations's product under a code of its own: every POST creates (201)."""
    return json.dumps({**PRODUCT, "productcode": code or f"RC_{next(codes)}"}).encode()


def replaced() -> bytes:
    return json.dumps({**PRODUCT, "productcode": "S10_1678"}).encode()


JSON = {**KEY, "Content-Type": "application/json"}
REQUESTS = {  # name -> (method, path, headers, body, the status each must get)
    "get one (bypass)": ("GET", PRODUCTS + "S10_1678/", KEY, None, 200),
    "get page (bypass)": ("GET", PRODUCTS + "?page=2&page_size=20", KEY, None, 200),
    "post (bypass)": ("POST", PRODUCTS, JSON, new_product, 201),
    "put (bypass)": ("PUT", PRODUCTS + "S10_1678/", JSON, replaced, 200),
    "patch (bypass)": ("PATCH", PRODUCTS + "S10_1678/", JSON, b'{"quantityinstock": 3}', 200),
    "delete (bypass)": ("DELETE", PRODUCTS + "{new}/", KEY, None, 204),  # {new}: a product POSTed first
    "get one with Origin (whole stack)": ("GET", PRODUCTS + "S10_1678/", {**KEY, "Origin": "http://a.test"}, None, 200),
    "get page in a session (whole stack)": ("GET", PRODUCTS, {**KEY, "X-Mock-Session": "cycles"}, None, 200),
    "post in a session (whole stack)": ("POST", PRODUCTS, {**JSON, "X-Mock-Session": "cycles"}, new_product, 201),
    "steered (whole stack)": ("GET", PRODUCTS + "S10_1678/", {**KEY, "Prefer": "code=404"}, None, 404),
}


@pytest.fixture(scope="module")
def connection() -> Iterator[http.client.HTTPConnection]:
    with running(create_app(Settings()), **uvicorn_options(Limits())) as origin:
        address = urlsplit(origin)
        client = http.client.HTTPConnection(address.hostname or "", address.port)
        yield client
        client.close()


def server_objects(garbage: list[object]) -> list[str]:
    """What of the server's is among `garbage`: its objects, and request scopes."""
    found = []
    for thing in garbage:
        module = type(thing).__module__ or ""
        if module.startswith(SERVER_MODULES) or (isinstance(thing, dict) and thing.get("type") == "http"):
            found.append(f"{module}.{type(thing).__qualname__}")
    return sorted(set(found))


@pytest.mark.parametrize("name", REQUESTS)
def test_a_request_leaves_no_reference_cycle(connection: http.client.HTTPConnection, name: str) -> None:
    method, path, headers, body, status = REQUESTS[name]

    def exchange(method: str, path: str, body: bytes | None, headers: dict[str, str]) -> int:
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        response.read()
        return response.status

    def send() -> int:
        target = path
        if "{new}" in path:
            code = f"RC_{next(codes)}"
            assert exchange("POST", PRODUCTS, new_product(code), JSON) == 201
            target = path.format(new=code)
        return exchange(method, target, body() if callable(body) else body, headers)

    send()  # a first request may fill caches: only what each request leaves counts
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        statuses = {send() for _ in range(20)}
        gc.collect()
        left = server_objects(gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert statuses == {status}, statuses
    assert left == [], f"{name}: reference cycles left {left}"
