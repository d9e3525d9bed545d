"""A request leaves nothing for the garbage collector.

Reference counting frees what a request made the moment it ends; a reference cycle waits for the
collector, whose passes then cost every request (a scope holding uvicorn's per-request object, which
holds the scope, cost a POST a tenth of its time: benchmarks/README.md, section 9). The mock runs
here under real uvicorn with its bounded protocol; each kind of request, on the bypass and through
the whole stack, is sent over a kept connection with the collector off, and what a collection then
finds unreachable must hold nothing of the server's.
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
from tests.live import running

KEY = {"X-API-Key": DEFAULT_API_KEY}
PRODUCTS = "/shop/api/v1/products/"
SERVER_MODULES = ("uvicorn", "mock_server", "connexion", "starlette", "asyncio")
codes = itertools.count()


def new_product() -> bytes:
    code = f"RC_{next(codes)}"
    body = {
        "productcode": code,
        "productname": f"Cycle {code}",
        "productscale": "1:10",
        "productvendor": "Vendor",
        "productdescription": "Test.",
        "quantityinstock": 1,
        "buyprice": "1.00",
        "msrp": "2.00",
        "productline": "Motorcycles",
    }
    return json.dumps(body).encode()


REQUESTS = {  # name -> (method, path, headers, body)
    "get one (bypass)": ("GET", PRODUCTS + "S10_1678/", KEY, None),
    "get page (bypass)": ("GET", PRODUCTS + "?page=2&page_size=20", KEY, None),
    "post (bypass)": ("POST", PRODUCTS, {**KEY, "Content-Type": "application/json"}, new_product),
    "get one with Origin (whole stack)": ("GET", PRODUCTS + "S10_1678/", {**KEY, "Origin": "http://a.example"}, None),
    "get page in a session (whole stack)": ("GET", PRODUCTS, {**KEY, "X-Mock-Session": "cycles"}, None),
    "post in a session (whole stack)": (
        "POST",
        PRODUCTS,
        {**KEY, "Content-Type": "application/json", "X-Mock-Session": "cycles"},
        new_product,
    ),
    "steered (whole stack)": ("GET", PRODUCTS + "S10_1678/", {**KEY, "Prefer": "code=404"}, None),
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
    method, path, headers, body = REQUESTS[name]

    def send() -> int:
        connection.request(method, path, body=body() if callable(body) else body, headers=headers)
        response = connection.getresponse()
        response.read()
        return response.status

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
    assert statuses <= {200, 201, 404}, statuses
    assert left == [], f"{name}: reference cycles left {left}"
