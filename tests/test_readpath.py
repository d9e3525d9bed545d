"""ReadPath serves the valid reads itself and answers exactly as Connexion does, byte for byte.

Each case runs against two mocks on the same fixtures, one with the read path and one without, and
their answers (status, every header, body) must be equal. The same case then goes to a `ReadPath`
built the way `create_app` builds it, which must answer it itself exactly when the case says so.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from urllib.parse import unquote

import pytest
from starlette.testclient import TestClient
from starlette.types import Receive, Scope, Send

from mock_server.app import BACKEND_PREFIX, GATEWAY_PREFIX, create_app, credential_checks, gateway_spec
from mock_server.auth import ApiKeys, Realm
from mock_server.fixtures import read_fixtures, record_fields
from mock_server.readpath import ReadPath, read_routes
from mock_server.routing import operation_table
from mock_server.schemas import load_spec
from mock_server.settings import DEFAULT_API_KEY, DEFAULT_FIXTURES, Settings
from mock_server.store import Store
from tests.conftest import DEV_CLIENT, TOKEN_PATH


@dataclass(frozen=True)
class Case:
    target: str
    credential: str = "key"  # key | token | none | wrong-key | wrong-token | basic | two-keys
    served: bool = True  # answered by the read path itself
    headers: dict[str, str] = field(default_factory=dict)


B, G = BACKEND_PREFIX, GATEWAY_PREFIX
CASES = [
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


@pytest.fixture(scope="module")
def clients() -> Iterator[tuple[TestClient, TestClient]]:
    fast = create_app(Settings())
    plain = create_app(Settings(read_path=False))
    with TestClient(fast) as fast_client, TestClient(plain) as plain_client:
        yield fast_client, plain_client


def headers_for(client: TestClient, case: Case) -> dict[str, str]:
    token = client.post(TOKEN_PATH, data=DEV_CLIENT).json()["access_token"]
    by_credential = {
        "key": {"X-API-Key": DEFAULT_API_KEY},
        "token": {"Authorization": f"Bearer {token}"},
        "none": {},
        "wrong-key": {"X-API-Key": "nope"},
        "wrong-token": {"Authorization": f"Bearer {token[:-4]}AAAA"},
        "basic": {"Authorization": "Basic c2hvcDpzaG9w"},
    }
    return {**by_credential.get(case.credential, {}), **case.headers}


def answer(client: TestClient, case: Case) -> tuple[int, list[tuple[str, str]], bytes]:
    if case.credential == "two-keys":
        headers = [("X-API-Key", DEFAULT_API_KEY), ("X-API-Key", DEFAULT_API_KEY)]
        response = client.get(case.target, headers=headers)
    else:
        response = client.get(case.target, headers=headers_for(client, case))
    return response.status_code, response.headers.multi_items(), response.content


@pytest.mark.parametrize("case", CASES, ids=lambda case: f"{case.credential}:{case.target}")
def test_the_read_path_answers_as_connexion_does(clients: tuple[TestClient, TestClient], case: Case) -> None:
    fast, plain = clients
    fast_answer, plain_answer = answer(fast, case), answer(plain, case)
    assert fast_answer == plain_answer
    assert fast_answer[0] == 200 or not case.served


def read_path() -> tuple[ReadPath, Realm]:
    """A ReadPath wired as create_app wires it, over an inner app that must not be reached."""
    spec = load_spec()
    realm = Realm()
    readers, _ = operation_table(Store(record_fields(), read_fixtures(DEFAULT_FIXTURES)))
    credentials = credential_checks(spec["components"]["securitySchemes"], ApiKeys(frozenset({DEFAULT_API_KEY})), realm)
    routes = [
        *read_routes(spec, BACKEND_PREFIX, readers, credentials),
        *read_routes(gateway_spec(spec), GATEWAY_PREFIX, readers, credentials),
    ]

    async def inner(scope: Scope, receive: Receive, send: Send) -> None:
        raise AssertionError("answer() never calls the inner app")

    return ReadPath(inner, routes), realm


@pytest.mark.parametrize("case", CASES, ids=lambda case: f"{case.credential}:{case.target}")
def test_the_read_path_serves_exactly_the_valid_reads(case: Case) -> None:
    middleware, realm = read_path()
    token = realm.issue("http://testserver/realms/shop", DEV_CLIENT)["access_token"]
    headers = {
        "key": [(b"x-api-key", DEFAULT_API_KEY.encode())],
        "token": [(b"authorization", f"Bearer {token}".encode())],
        "wrong-key": [(b"x-api-key", b"nope")],
        "wrong-token": [(b"authorization", f"Bearer {token[:-4]}AAAA".encode())],
        "basic": [(b"authorization", b"Basic c2hvcDpzaG9w")],
        "two-keys": [(b"x-api-key", DEFAULT_API_KEY.encode())] * 2,
    }.get(case.credential, [])
    headers += [(name.lower().encode(), value.encode()) for name, value in case.headers.items()]
    path, _, query = case.target.partition("?")
    scope = {
        "type": "http",
        "method": "GET",
        "scheme": "http",
        "path": unquote(path),
        "raw_path": path.encode(),
        "query_string": query.encode(),
        "root_path": "",
        "headers": [(b"host", b"testserver"), *headers],
    }
    assert (middleware.answer(scope) is not None) == case.served


def test_a_request_with_a_body_is_left_to_connexion() -> None:
    middleware, _ = read_path()
    scope = {
        "type": "http",
        "method": "GET",
        "scheme": "http",
        "path": f"{B}/products/",
        "query_string": b"",
        "headers": [(b"x-api-key", DEFAULT_API_KEY.encode()), (b"content-length", b"2")],
    }
    assert middleware.answer(scope) is None
    assert middleware.answer({**scope, "headers": scope["headers"][:1]}) is not None
