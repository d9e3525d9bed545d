"""FastPath serves the valid requests itself and answers exactly as Connexion does, byte for byte.

Each case runs against two mocks on the same fixtures, one with the fast path and one without, and
their answers (status, every header, body) must be equal. The same cases then go to a `FastPath`
built the way `create_app` builds it, which must answer each itself exactly when the case says so.
Writes run in order, each against the state the ones before it left.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

import pytest
from starlette.testclient import TestClient
from starlette.types import Receive, Scope, Send

from mock_server.api.connexion_seam import CompiledParameterValidator
from mock_server.api.fastpath import VERDICTS_KEPT, FastPath, Route, fast_routes, takes_any_text
from mock_server.api.routing import operation_table
from mock_server.api.security import ApiKeys
from mock_server.app import create_app
from mock_server.realm import open_realm
from mock_server.settings import DEFAULT_API_KEY, DEFAULT_FIXTURES, Settings
from mock_server.spec.schemas import load_spec
from mock_server.state.fixtures import read_fixtures, record_fields
from mock_server.state.memory import MemoryStore
from mock_server.surfaces import BACKEND_PREFIX, GATEWAY_PREFIX, credential_checks, gateway_spec
from tests.conftest import DEV_CLIENT, TOKEN_PATH
from tests.mock_server.state.test_store import product


@dataclass(frozen=True)
class Case:
    target: str
    credential: str = "key"  # key | token | none | wrong-key | wrong-token | basic | two-keys
    served: bool = True  # answered by the fast path itself
    headers: dict[str, str] = field(default_factory=dict)
    method: str = "GET"
    body: Any = None  # sent as JSON unless it is bytes


B, G = BACKEND_PREFIX, GATEWAY_PREFIX
READS = [
    Case(f"{B}/products/"),
    Case(f"{B}/products/?page=2&page_size=5"),
    Case(f"{B}/products/?page_size=500"),
    Case(f"{B}/products/?page=03&unknown=x&page_size=7"),
    Case(f"{B}/products/S10_1678/"),
    Case(f"{B}/products/S10_1678/order-details/?page_size=2"),
    Case(f"{B}/productlines/Classic%20Cars/"),
    Case(f"{B}/productlines/Classic%20Cars/products/?page=2&page_size=3"),
    Case(f"{B}/productlines/"),
    Case(f"{B}/customers/103/"),
    Case(f"{B}/customers/00103/orders/"),
    Case(f"{B}/customers/103/payments/", credential="token"),
    Case(f"{G}/customers/", credential="token"),
    Case(f"{G}/customers/141/orders/?page_size=1&page=2", credential="token"),
    Case(f"{B}/products/?page=2", headers={"X-Forwarded-Host": "shop.example", "X-Forwarded-Proto": "https"}),
    Case(f"{B}/products/", headers={"Origin": "http://localhost:3000"}),
    Case(f"{B}/products/", credential="wrong-key", served=False),
    Case(f"{B}/products/", credential="none", served=False),
    Case(f"{B}/products/", credential="wrong-token", served=False),
    Case(f"{B}/products/", credential="basic", served=False),
    Case(f"{B}/products/", credential="two-keys", served=False),
    Case(f"{G}/customers/", credential="key", served=False),
    Case(f"{B}/products/?page=0", served=False),
    Case(f"{B}/products/?page=abc", served=False),
    Case(f"{B}/products/?page=1&page=2", served=False),
    Case(f"{B}/products/?page=%203", served=False),
    Case(f"{B}/products/?page=999", served=False),
    Case(f"{B}/products/?page_size=-1", served=False),
    Case(f"{B}/products/S99_9999/", served=False),
    Case(f"{B}/products/S10%2F1678/", served=False),
    Case(f"{B}/customers/abc/", served=False),
    Case(f"{B}/customers/1.0/", served=False),
    Case(f"{B}/customers/99999/orders/", served=False),
    Case(f"{B}/products", served=False),
    Case(f"{B}/nowhere/", served=False),
]


CUSTOMER = {
    "customernumber": 9001,
    "customername": "Fast Path Models",
    "contactlastname": "Path",
    "contactfirstname": "Fast",
    "phone": "555-0100",
    "addressline1": "1 Loop Road",
    "city": "Nantes",
    "country": "France",
}
GLIDERS = {"productline": "Gliders", "textdescription": None, "htmldescription": None, "image": None}
GLIDER = product("S99_0001", "Gliders", 5) | {
    "productname": "1:24 Glider",
    "productscale": "1:24",
    "productvendor": "Fast Path Models",
    "productdescription": "A glider.",
    "buyprice": "10.00",
    "msrp": "20.00",
}
FORM = {"Content-Type": "application/x-www-form-urlencoded"}
WRITES = [
    Case(f"{B}/productlines/", method="POST", body=GLIDERS),
    Case(f"{B}/productlines/", method="POST", body=GLIDERS, served=False),  # 409
    Case(f"{B}/products/", method="POST", body=GLIDER),
    Case(
        f"{B}/products/",
        method="POST",
        body=GLIDER | {"productcode": "S99_0002", "productline": "Nowhere"},
        served=False,
    ),
    Case(f"{B}/products/", method="POST", body=GLIDER | {"productcode": 7}, served=False),
    Case(f"{B}/products/", method="POST", body=GLIDER | {"msrp": "1.234"}, served=False),
    Case(f"{B}/products/", method="POST", body=b"{", served=False),
    Case(f"{B}/products/", method="POST", body=b"null", served=False),
    Case(f"{B}/products/", method="POST", body=b'"\xff"', served=False),
    Case(f"{B}/products/", method="POST", body=b"", served=False),
    Case(f"{B}/products/", method="POST", body=GLIDER, credential="none", served=False),
    Case(f"{B}/products/", method="POST", body=b"productcode=S99_0003", headers=FORM, served=False),
    Case(
        f"{B}/products/",
        method="POST",
        body=GLIDER | {"productcode": "S99_0004"},
        headers={"Content-Type": "application/json; charset=utf-8"},
        served=False,
    ),
    Case(f"{B}/products/S99_0001/", method="PATCH", body={"quantityinstock": 7, "msrp": "21.5"}),
    Case(f"{B}/products/S99_0001/", method="PATCH", body={"productcode": "S99_0009"}, served=False),  # 409
    Case(f"{B}/products/S99_0001/", method="PATCH", body=b"", served=False),
    Case(f"{B}/products/S99_0001/", method="PUT", body=GLIDER | {"productname": "Glider Mk II"}),
    Case(f"{B}/products/S99_9999/", method="PUT", body=GLIDER | {"productcode": "S99_9999"}, served=False),  # 404
    Case(f"{B}/productlines/Gliders/", method="DELETE", served=False),  # 409: it has products
    Case(f"{B}/products/S99_0001/", method="DELETE"),
    Case(f"{B}/products/S99_0001/", method="DELETE", served=False),  # 404
    Case(f"{G}/customers/", method="POST", credential="token", body=CUSTOMER),
    Case(f"{G}/customers/9001/", method="PATCH", credential="key", body={"city": "Paris"}, served=False),
    Case(f"{G}/customers/9001/", method="PATCH", credential="token", body={"city": "Paris", "creditlimit": "10"}),
    Case(f"{B}/customers/9001/", method="DELETE", credential="wrong-key", served=False),
    Case(f"{B}/customers/9001/", method="DELETE", credential="token"),
    Case(f"{B}/customers/103/", method="DELETE", served=False),  # 409: it has orders
]


def content(case: Case) -> bytes | None:
    if case.body is None:
        return None
    return case.body if isinstance(case.body, bytes) else json.dumps(case.body).encode()


@pytest.fixture(scope="module")
def clients() -> Iterator[tuple[TestClient, TestClient]]:
    fast = create_app(Settings())
    plain = create_app(Settings(fast_path=False))
    with TestClient(fast) as fast_client, TestClient(plain) as plain_client:
        yield fast_client, plain_client


def headers_for(token: str, case: Case) -> list[tuple[str, str]]:
    by_credential = {
        "key": [("X-API-Key", DEFAULT_API_KEY)],
        "token": [("Authorization", f"Bearer {token}")],
        "wrong-key": [("X-API-Key", "nope")],
        "wrong-token": [("Authorization", f"Bearer {token[:-4]}AAAA")],
        "basic": [("Authorization", "Basic c2hvcDpzaG9w")],
        "two-keys": [("X-API-Key", DEFAULT_API_KEY)] * 2,
    }
    json_body = [("Content-Type", "application/json")] if case.body is not None else []
    headers = {**dict(json_body), **case.headers}
    return by_credential.get(case.credential, []) + list(headers.items())


def answer(client: TestClient, case: Case) -> tuple[int, list[tuple[str, str]], bytes]:
    token = client.post(TOKEN_PATH, data=DEV_CLIENT).json()["access_token"]
    response = client.request(case.method, case.target, headers=headers_for(token, case), content=content(case))
    return response.status_code, response.headers.multi_items(), response.content


@pytest.mark.parametrize("case", READS, ids=lambda case: f"{case.credential}:{case.target}")
def test_a_read_gets_the_answer_connexion_gives(clients: tuple[TestClient, TestClient], case: Case) -> None:
    fast, plain = clients
    fast_answer, plain_answer = answer(fast, case), answer(plain, case)
    assert fast_answer == plain_answer
    assert fast_answer[0] == 200 or not case.served


def test_writes_get_the_answers_connexion_gives() -> None:
    with TestClient(create_app(Settings())) as fast, TestClient(create_app(Settings(fast_path=False))) as plain:
        for case in WRITES:
            fast_answer, plain_answer = answer(fast, case), answer(plain, case)
            assert fast_answer == plain_answer, case
            assert fast_answer[0] < 300 or not case.served, case


class Served:
    """A FastPath wired as create_app wires it, over an inner app that notes what reached it."""

    def __init__(self) -> None:
        spec = load_spec()
        self.realm = open_realm(Settings())
        readers, writers = operation_table(MemoryStore(record_fields(), read_fixtures(DEFAULT_FIXTURES)))
        keys = ApiKeys(frozenset({DEFAULT_API_KEY}))
        credentials = credential_checks(spec["components"]["securitySchemes"], keys, self.realm)
        routes = [
            *fast_routes(spec, BACKEND_PREFIX, readers, writers, credentials),
            *fast_routes(gateway_spec(spec), GATEWAY_PREFIX, readers, writers, credentials),
        ]
        self.passed_on: list[bytes] = []
        self.middleware = FastPath(self.inner, routes, max_body_bytes=Settings().max_body_bytes)
        self.token = self.realm.token_request(DEV_CLIENT)["access_token"]

    async def inner(self, scope: Scope, receive: Receive, send: Send) -> None:
        message = await receive()
        self.passed_on.append(message.get("body", b""))
        await send({"type": "http.response.start", "status": 599, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    def __call__(self, case: Case) -> bool:
        """Whether the fast path answered `case` itself (and the inner app got the whole body if not)."""
        path, _, query = case.target.partition("?")
        body = content(case) or b""
        headers = [(name.lower().encode(), value.encode()) for name, value in headers_for(self.token, case)]
        headers += [(b"host", b"testserver"), (b"content-length", str(len(body)).encode())]
        scope = {
            "type": "http",
            "method": case.method,
            "scheme": "http",
            "path": unquote(path),
            "raw_path": path.encode(),
            "query_string": query.encode(),
            "root_path": "",
            "headers": headers,
        }
        received = [{"type": "http.request", "body": body, "more_body": False}]

        async def receive() -> dict[str, Any]:
            return received.pop(0) if received else {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            pass

        before = len(self.passed_on)
        asyncio.run(self.middleware(scope, receive, send))
        if len(self.passed_on) > before:
            assert self.passed_on[-1] == body, "the body read for the fast path is replayed whole"
            return False
        return True


@pytest.mark.parametrize("case", READS, ids=lambda case: f"{case.credential}:{case.target}")
def test_the_fast_path_serves_exactly_the_valid_reads(case: Case) -> None:
    assert Served()(case) == case.served


def test_the_fast_path_serves_exactly_the_valid_writes() -> None:
    served = Served()
    assert [served(case) for case in WRITES] == [case.served for case in WRITES]


def test_a_request_with_an_unexpected_body_is_left_to_connexion() -> None:
    served = Served()
    assert not served(Case(f"{B}/products/", body=b"{}"))
    assert not served(Case(f"{B}/products/S10_1678/", method="DELETE", body=b"{}"))


def test_a_route_remembers_a_bounded_number_of_short_parameter_verdicts() -> None:
    """`Route.accepts` keeps the validator's verdicts per value: the same verdicts, in bounded memory."""
    page = {"name": "page", "in": "query", "schema": {"type": "integer", "minimum": 1}}
    code = {"name": "code", "in": "path", "schema": {"type": "string", "maxLength": 200}}
    route = Route("GET", re.compile("/"), {"page": page, "code": code}, [])
    for _ in range(2):  # judged, then remembered
        assert route.accepts("query", "page", 2)
        assert not route.accepts("query", "page", 0)
    for number in range(1, 3 * VERDICTS_KEPT):
        assert route.accepts("query", "page", number)
    assert len(route.verdicts) <= VERDICTS_KEPT
    assert route.accepts("path", "code", "x" * 200)
    assert not route.accepts("path", "code", "x" * 201)
    assert not [key for key in route.verdicts if key[1] == "code"]  # long text is judged each time


ODD_TEXT = ["x", "-1", "0", "null", " ", "%2F", "S10_1678" * 40, "é\u0000\U0001f600", "true", "1e5"]


def test_a_parameter_that_takes_any_text_is_one_connexion_accepts_any_text_for() -> None:
    """`Route.accepts` passes any string for a parameter of `any_text` without asking the validator:
    Connexion's own validator must accept every string there too, and the rule must leave out a
    schema that checks more than the type."""
    served = Served()
    routes = [route for routes in served.middleware.routes.values() for route in routes]
    unchecked = [(route, name) for route in routes for name in route.any_text]
    assert {name for _, name in unchecked} == {"productcode", "productline"}
    for route, name in unchecked:
        for text in ODD_TEXT:
            parameter = route.parameters[name]
            assert not CompiledParameterValidator.validate_parameter(parameter["in"], text, parameter)
            assert route.accepts(parameter["in"], name, text)
    assert not takes_any_text({"name": "c", "in": "path", "schema": {"type": "string", "maxLength": 3}})
    assert not takes_any_text({"name": "c", "in": "path", "schema": {"type": "string", "format": "date"}})
    assert not takes_any_text({"name": "n", "in": "path", "schema": {"type": "integer"}})
