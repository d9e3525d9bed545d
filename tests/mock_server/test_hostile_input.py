"""Hostile input over real HTTP: every attack is a 4xx problem body, never a 5xx, and the state stays
exactly as it was and fully readable (`GET /__mock__/state` and every list) afterwards.

Each attack runs against the mock twice, with the fast path and through Connexion alone, both served
by uvicorn with the limits `python -m mock_server` runs with (a shorter request deadline, so the
slow-client cases stay quick).
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from mock_server.app import MockApp, create_app
from mock_server.arguments import parse_settings
from mock_server.cli import banner
from mock_server.http.limits import Limits, uvicorn_options
from mock_server.settings import DEFAULT_FIXTURES, Settings
from mock_server.spec.inputs import MAX_JSON_DEPTH, digit_limit
from mock_server.spec.schemas import component_schema, load_spec
from mock_server.state.fixtures import FixtureError, read_fixtures
from tests.conftest import API_KEY_HEADERS, BACKEND
from tests.mock_server.api.test_operations import CUSTOMER, PRODUCT
from tests.support.live import running

LIMITS = Limits(request_seconds=1.5)
JSON = {"Content-Type": "application/json"}
FORM = {"Content-Type": "application/x-www-form-urlencoded"}
LISTS = [path for path, item in load_spec()["paths"].items() if "{" not in path and "get" in item]
Request = tuple[str, str, dict[str, str], bytes | None]


def multipart(fields: list[tuple[str, bytes]]) -> tuple[dict[str, str], bytes]:
    parts = b"".join(
        b'--zz\r\nContent-Disposition: form-data; name="' + name.encode() + b'"\r\n\r\n' + value + b"\r\n"
        for name, value in fields
    )
    return {"Content-Type": "multipart/form-data; boundary=zz"}, parts + b"--zz--\r\n"


def with_text(record: dict[str, Any], field: str, raw_json_string: str) -> bytes:
    """`record` as JSON with `field` set to a JSON string literal given as written (escapes kept)."""
    text = json.dumps({**record, field: "PLACEHOLDER"})
    return text.replace('"PLACEHOLDER"', raw_json_string).encode()


SURROGATE = '"x\\ud800y"'
PRODUCTLINE = {"productline": "Hostile Line", "textdescription": "t"}
DIGITS = [4299, 4300, 4301, 5000]

SURROGATE_BODIES: list[Request] = [
    ("POST", "/productlines/", JSON, with_text(PRODUCTLINE, "productline", SURROGATE)),
    ("POST", "/productlines/", JSON, with_text(PRODUCTLINE, "textdescription", '"\\udc80"')),
    ("POST", "/productlines/", JSON, b'{"productline": "k", "\\ud800": "key"}'),
    ("POST", "/products/", JSON, with_text(PRODUCT, "productname", SURROGATE)),
    ("POST", "/customers/", JSON, with_text(CUSTOMER, "customername", '"\\udbff\\udbff"')),
    (
        "PUT",
        "/productlines/Classic%20Cars/",
        JSON,
        with_text({"productline": "Classic Cars"}, "textdescription", SURROGATE),
    ),
    ("PATCH", "/productlines/Classic%20Cars/", JSON, with_text({}, "textdescription", SURROGATE)),
    ("PATCH", "/products/S10_1678/", JSON, with_text({}, "productname", SURROGATE)),
    ("PATCH", "/customers/103/", JSON, with_text({}, "city", SURROGATE)),
    ("POST", "/productlines/", FORM, b"productline=x%ED%A0%80y"),
    ("POST", "/productlines/", FORM, b"productline=ok&textdescription=%FF"),
    ("POST", "/productlines/", FORM, b"productline=ok&%FF=x"),
    ("PATCH", "/productlines/Classic%20Cars/", FORM, b"textdescription=%C3%28"),
    ("POST", "/productlines/", *multipart([("productline", b"x\xed\xa0\x80y")])),
    ("PATCH", "/products/S10_1678/", *multipart([("productname", b"\xff\xfe")])),
]
SURROGATE_PATHS: list[Request] = [
    (method, path, JSON if method in ("PUT", "PATCH") else {}, b"{}" if method in ("PUT", "PATCH") else None)
    for method in ("GET", "PUT", "PATCH", "DELETE")
    for path in ("/productlines/x%ED%A0%80y/", "/products/%FF/", "/productlines/%C0%AF/products/")
]
LONG_PATH_INTEGERS: list[Request] = [  # 404, the spec's answer to a path parameter not of its type
    *[("GET", f"/customers/{'1' * n}/", {}, None) for n in [20, *DIGITS]],
    *[("GET", f"/customers/{'1' * n}/orders/", {}, None) for n in DIGITS],
    *[("DELETE", f"/customers/{'9' * n}/", {}, None) for n in DIGITS],
    *[("PATCH", f"/customers/{'1' * n}/", JSON, b"{}") for n in DIGITS],
]
LONG_INTEGERS: list[Request] = [
    *[("GET", f"/products/?{name}={'1' * n}", {}, None) for n in DIGITS for name in ("page", "page_size")],
    ("GET", "/products/?page=" + "\u0661" * 5000, {}, None),  # Arabic-Indic digits: int() takes those too
    ("GET", "/customers/?page_size=-" + "1" * 5000, {}, None),
    *[("POST", "/products/", JSON, with_text(PRODUCT, "quantityinstock", "1" * n)) for n in DIGITS],
    *[("POST", "/products/", FORM, b"quantityinstock=" + b"1" * n) for n in DIGITS],
    *[("PATCH", "/products/S10_1678/", *multipart([("quantityinstock", b"7" * n)])) for n in DIGITS],
    *[("PATCH", "/customers/103/", FORM, b"salesrepemployeenumber=" + b"1" * n) for n in DIGITS],
]
NO_CONTENT_TYPE: list[Request] = [
    ("POST", "/productlines/", {}, json.dumps(PRODUCTLINE).encode()),
    ("POST", "/products/", {}, json.dumps(PRODUCT).encode()),
    ("POST", "/customers/", {}, json.dumps(CUSTOMER).encode()),
    ("PUT", "/productlines/Classic%20Cars/", {}, json.dumps({"productline": "Classic Cars"}).encode()),
    ("PATCH", "/products/S10_1678/", {}, b'{"productname": "x"}'),
    ("PATCH", "/customers/103/", {}, b"city=x"),
]
DEEP: list[Request] = [
    ("POST", "/productlines/", JSON, b"[" * 100_000 + b"]" * 100_000),
    (
        "POST",
        "/productlines/",
        JSON,
        b'{"productline": ' + b"[" * (MAX_JSON_DEPTH + 1) + b"]" * (MAX_JSON_DEPTH + 1) + b"}",
    ),
    ("PATCH", "/products/S10_1678/", JSON, b'{"productname": ' + b'{"a": ' * 5000 + b"1" + b"}" * 5001),
]
ATTACKS = {  # kind: (requests, the status each must get)
    "surrogate-body": (SURROGATE_BODIES, 400),
    "surrogate-path": (SURROGATE_PATHS, 400),
    "long-path-integer": (LONG_PATH_INTEGERS, 404),
    "long-integer": (LONG_INTEGERS, 400),
    "no-content-type": (NO_CONTENT_TYPE, 415),
    "deep-json": (DEEP, 400),
}
CASES = [
    pytest.param(case, status, id=f"{kind}-{i}")
    for kind, (cases, status) in ATTACKS.items()
    for i, case in enumerate(cases)
]


@pytest.fixture(scope="module", params=["fast-path", "connexion"])
def mock(request: pytest.FixtureRequest) -> Iterator[tuple[MockApp, httpx.Client]]:
    app = create_app(Settings(fast_path=request.param == "fast-path"))
    with (
        running(app, **uvicorn_options(LIMITS)) as origin,
        httpx.Client(base_url=origin, headers=API_KEY_HEADERS, timeout=30) as client,
    ):
        yield app, client


def readable_state(client: httpx.Client) -> Any:
    """The whole state, after checking that it and every list (every page of it) can be read."""
    state = client.get("/__mock__/state")
    assert state.status_code == 200, state.text
    for path in LISTS:
        url: str | None = f"{BACKEND}{path}?page_size=100"
        while url:
            page = client.get(url)
            assert page.status_code == 200, (path, page.text)
            url = page.json()["next"]
    return state.json()


def assert_refused(response: httpx.Response, *statuses: int) -> None:
    assert 400 <= response.status_code < 500, (response.status_code, response.text[:300])
    if statuses:
        assert response.status_code in statuses, (response.status_code, response.text[:300])
    assert response.headers["content-type"] == "application/problem+json", response.headers
    assert response.json()["status"] == response.status_code


def send(client: httpx.Client, request: Request) -> httpx.Response:
    method, path, headers, body = request
    url = path if path.startswith("/__mock__") else BACKEND + path
    return client.request(method, url, headers=headers, content=body)


@pytest.mark.parametrize(("attack", "status"), CASES)
def test_hostile_input_is_a_4xx_problem_and_changes_nothing(
    mock: tuple[MockApp, httpx.Client], attack: Request, status: int
) -> None:
    _, client = mock
    before = readable_state(client)
    response = send(client, attack)
    assert_refused(response, status)
    assert readable_state(client) == before


@pytest.mark.parametrize(
    "attack", SURROGATE_BODIES[:10] + SURROGATE_PATHS[:3] + LONG_PATH_INTEGERS[:4] + LONG_INTEGERS[:4]
)
def test_an_undecodable_value_or_long_integer_is_named(mock: tuple[MockApp, httpx.Client], attack: Request) -> None:
    response = send(mock[1], attack)
    assert response.status_code in (400, 404)
    fields = [error["field"] for error in response.json().get("errors", [])]
    assert fields and all(field and field not in ("(body)", "path") for field in fields), response.text


def test_a_missing_content_type_is_415_saying_which_types(mock: tuple[MockApp, httpx.Client]) -> None:
    response = send(mock[1], NO_CONTENT_TYPE[0])
    assert response.status_code == 415
    assert "Content-Type" in response.json()["detail"] and "application/json" in response.json()["detail"]


@pytest.mark.parametrize("digits", [1, 18, 19])
def test_integers_within_bounds_still_pass(mock: tuple[MockApp, httpx.Client], digits: int) -> None:
    """The bound counts digits from the spec (`format: int64`: 19), it does not refuse big pages."""
    client = mock[1]
    assert client.get(f"{BACKEND}/products/?page_size={'1' * digits}").status_code == 200
    assert client.get(f"{BACKEND}/customers/{'103'.zfill(max(digits, 3))}/").status_code == 200
    assert client.get(f"{BACKEND}/customers/?page_size=100&page=1").status_code == 200


@pytest.mark.parametrize("name", ["page", "page_size"])
def test_a_query_integer_is_bounded_by_its_format_exactly(mock: tuple[MockApp, httpx.Client], name: str) -> None:
    """`format: int64`: 2**63 - 1 is admitted (a page past the end is 404), 2**63 is 400, both signs."""
    client = mock[1]
    largest = client.get(f"{BACKEND}/products/?{name}={2**63 - 1}")
    assert largest.status_code == (404 if name == "page" else 200), largest.text
    for value in (2**63, -(2**63) - 1, 10**19):
        assert_refused(client.get(f"{BACKEND}/products/?{name}={value}"), 400)
    assert client.get(f"{BACKEND}/customers/{2**63}/").status_code == 404


QUERY_INTEGERS = {
    name: parameter["schema"]
    for name, parameter in load_spec()["components"]["parameters"].items()
    if parameter["in"] == "query" and parameter["schema"]["type"] == "integer"
}


def underscored(digits: str) -> str:
    """`digits` with an underscore between each two: int() reads `1_2_3` as 123, and so does the mock."""
    return "_".join(digits)


def refused_naming(response: httpx.Response, field: str) -> None:
    assert_refused(response, 400)
    assert [error["field"] for error in response.json()["errors"]] == [field], response.text


@pytest.mark.parametrize("name", sorted(QUERY_INTEGERS))
def test_underscores_hide_no_digit_of_a_query_integer_from_its_bound(
    mock: tuple[MockApp, httpx.Client], name: str
) -> None:
    """The mock reads `page` and `page_size` as Python's int() does (`query-integers`), underscores too,
    and counts their digits before it converts them (`integers-out-of-bounds`). A value past the bound
    with an underscore between each two digits was let through: `page` answered a 404 quoting a number
    of thousands of digits, `page_size` a 200. Refused as its plain digits are, it is now; a spelling
    within the bound gets the very answer of its plain digits."""
    client = mock[1]
    most = digit_limit(QUERY_INTEGERS[name])
    for digits in ("1" * (most + 1), "0" * most + "2", "1" * 5000):  # zeros count, as in the plain spelling
        for text in (digits, underscored(digits), f"+{underscored(digits)}"):
            refused_naming(client.get(f"{BACKEND}/products/", params={name: text}), name)
    plain = client.get(f"{BACKEND}/products/", params={name: "2"})
    assert plain.status_code == 200, plain.text
    for text in (underscored("02"), " 0_2 ", "+2", "\uff12", "\u0662"):  # full-width and Arabic-Indic digits
        assert client.get(f"{BACKEND}/products/", params={name: text}).json() == plain.json(), text
    for text in ("2_", "_2", "0__2", "2.0", "2e0"):  # what int() refuses
        refused_naming(client.get(f"{BACKEND}/products/", params={name: text}), name)


@pytest.mark.parametrize("media", ["form", "multipart"])
def test_underscores_hide_no_digit_of_a_body_integer_from_its_bound(
    mock: tuple[MockApp, httpx.Client], media: str
) -> None:
    """A form or multipart field reads as Python's int() does, as Django REST Framework's `IntegerField`:
    underscores count for no digit, so a value past the bound is refused (nothing changes) and one within
    is stored as its number."""
    client = mock[1]
    field, url = "quantityinstock", f"{BACKEND}/products/S10_1678/"
    most = digit_limit(component_schema("ProductRequest")["properties"][field])
    before = readable_state(client)

    def patch(text: str) -> httpx.Response:
        if media == "form":
            return client.patch(url, content=f"{field}={text}".encode(), headers=FORM)
        headers, body = multipart([(field, text.encode())])
        return client.patch(url, content=body, headers=headers)

    for digits in ("1" * (most + 1), "0" * most + "7", "1" * 5000):
        refused_naming(patch(underscored(digits)), field)
    assert readable_state(client) == before
    stored = client.get(url).json()[field]
    assert patch(underscored(str(stored + 11))).json()[field] == stored + 11
    assert patch(underscored(str(stored))).json()[field] == stored
    assert readable_state(client) == before


NOT_JSON_NUMBERS = ["NaN", "Infinity", "-Infinity", "1E400", "-1e400", "1" + "0" * 400 + ".5"]
"""Numbers JSON has not (RFC 8259), or that no double holds, which Python's parser reads (as infinity)."""


@pytest.mark.parametrize("number", NOT_JSON_NUMBERS)
def test_a_number_json_has_not_is_400_not_json_wherever_it_stands(
    mock: tuple[MockApp, httpx.Client], number: str
) -> None:
    """orjson refuses these and the standard parser read them. In a field they failed validation as "null"
    (the value as orjson writes it), and in an unknown field a create went through. Now the body is not
    JSON, as Django REST Framework's strict parser says, in the API and in the admin import alike."""
    client = mock[1]
    before = readable_state(client)
    product = json.dumps({**PRODUCT, "productcode": "S99_NaN"})
    for body in (product.replace("120", number, 1), product[:-1] + f', "unknown": [{number}]}}'):
        response = client.post(f"{BACKEND}/products/", content=body.encode(), headers=JSON)
        assert_refused(response, 400)
        assert "not valid JSON" in response.json()["detail"] and "null" not in response.json()["detail"]
    state = json.dumps(before).replace('"quantityinstock": 7933', f'"quantityinstock": {number}', 1)
    assert state != json.dumps(before)
    assert_refused(client.put("/__mock__/state", content=state.encode(), headers=JSON), 400)
    assert readable_state(client) == before


def test_a_poisoned_admin_import_is_400_and_changes_nothing(mock: tuple[MockApp, httpx.Client]) -> None:
    client = mock[1]
    before = readable_state(client)
    text = json.dumps(before)
    poisoned = text.replace('"Classic Cars"', '"Classic\\ud800Cars"', 1).encode()
    deep = b"[" * 100_000 + b"]" * 100_000
    nested = json.dumps(
        {
            **before,
            "productlines": [
                {
                    **before["productlines"][0],
                    "x": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]],
                }
            ],
        }
    ).encode()
    for body in (poisoned, deep, nested, b"\xff\xfe", b"{" + b'"a":' * 10 + b"1"):
        response = client.put("/__mock__/state", content=body, headers=JSON)
        assert_refused(response, 400)
    assert "productline" in client.put("/__mock__/state", content=poisoned, headers=JSON).json()["detail"]
    assert readable_state(client) == before


def test_fixtures_with_a_lone_surrogate_are_refused_at_load_naming_the_field(tmp_path: Path) -> None:
    for source in DEFAULT_FIXTURES.glob("*.json"):
        (tmp_path / source.name).write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
    lines = tmp_path / "productlines.json"
    lines.write_text(lines.read_text(encoding="utf-8").replace('"Classic Cars"', '"Classic\\udfffCars"', 1))
    with pytest.raises(FixtureError, match=r"productline.*surrogate"):
        for records in read_fixtures(tmp_path).values():
            list(records)


def test_a_repeated_form_field_takes_its_last_value(mock: tuple[MockApp, httpx.Client]) -> None:
    client = mock[1]
    before = readable_state(client)
    created = client.post(f"{BACKEND}/productlines/", content=b"productline=Dup+A&productline=Dup+B", headers=FORM)
    assert created.status_code == 201 and created.json()["productline"] == "Dup B", created.text
    headers, body = multipart([("productline", b"Dup C"), ("productline", b"Dup D"), ("textdescription", b"t")])
    created = client.post(f"{BACKEND}/productlines/", content=body, headers=headers)
    assert created.status_code == 201 and created.json()["productline"] == "Dup D", created.text
    patched = client.patch(
        f"{BACKEND}/productlines/Dup%20B/", content=b"textdescription=1&textdescription=2", headers=FORM
    )
    assert patched.json()["textdescription"] == "2"
    for name in ("Dup%20B", "Dup%20D"):
        assert client.delete(f"{BACKEND}/productlines/{name}/").status_code == 204
    assert readable_state(client) == before


def test_a_repeated_query_parameter_keeps_its_last_value(mock: tuple[MockApp, httpx.Client]) -> None:
    client = mock[1]
    repeated = client.get(f"{BACKEND}/products/?page=1&page=2&page_size=5")
    assert repeated.status_code == 200
    assert repeated.json()["results"] == client.get(f"{BACKEND}/products/?page=2&page_size=5").json()["results"]


# --- the admin API ---------------------------------------------------------------------------------

ADMIN_ROUTES: list[tuple[str, str]] = [
    ("GET", "/__mock__/health"),
    ("POST", "/__mock__/reset"),
    ("GET", "/__mock__/state"),
    ("PUT", "/__mock__/state"),
    ("GET", "/__mock__/requests"),
]


def admin(client: httpx.Client, method: str, path: str, **headers: str) -> httpx.Response:
    body = json.dumps(client.get("/__mock__/state").json()).encode() if method == "PUT" else None
    return client.request(method, path, content=body, headers={**JSON, **headers} if body else headers)


@pytest.mark.parametrize(("method", "path"), ADMIN_ROUTES)
@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "http://evil.example"},
        {"Origin": "null"},
        {"Origin": "http://localhost:1"},  # another port is another origin
        {"Host": "evil.example"},
        {"Host": "rebound.example:{port}"},  # DNS rebinding: a foreign name, the right port
        {"Host": "localhost.rebound.example:{port}"},  # a foreign name that starts as a loopback one
        {"Host": "127.0.0.1:{port}@evil.example"},  # not a Host value at all
    ],
    ids=[
        "foreign-origin",
        "null-origin",
        "other-port-origin",
        "foreign-host",
        "rebound-host",
        "suffixed-host",
        "bad-host",
    ],
)
def test_the_admin_api_refuses_other_origins_and_hosts(
    mock: tuple[MockApp, httpx.Client], method: str, path: str, headers: dict[str, str]
) -> None:
    client = mock[1]
    port = str(client.base_url.port)
    before = readable_state(client)
    client.patch(
        f"{BACKEND}/productlines/Classic%20Cars/", json={"textdescription": "changed"}
    )  # a reset would undo it
    changed = readable_state(client)
    response = admin(client, method, path, **{name: value.replace("{port}", port) for name, value in headers.items()})
    assert_refused(response, 403)
    assert "access-control-allow-origin" not in response.headers
    assert readable_state(client) == changed
    assert client.post("/__mock__/reset").status_code == 204
    assert readable_state(client) == before


@pytest.mark.parametrize(("method", "path"), ADMIN_ROUTES)
def test_the_admin_api_answers_its_own_origin_without_cors(
    mock: tuple[MockApp, httpx.Client], method: str, path: str
) -> None:
    client = mock[1]
    origin = f"http://localhost:{client.base_url.port}"
    response = admin(client, method, path, Origin=origin, Host=f"localhost:{client.base_url.port}")
    assert response.status_code < 300, response.text
    assert "access-control-allow-origin" not in response.headers
    preflight = client.options(path, headers={"Origin": "http://evil.example", "Access-Control-Request-Method": "POST"})
    assert_refused(preflight, 403)
    assert "access-control-allow-origin" not in preflight.headers


def test_an_admin_token_is_required_when_set_and_the_api_can_be_off() -> None:
    app = create_app(Settings(admin_token="s3cret"))
    with running(app) as origin, httpx.Client(base_url=origin, timeout=30) as client:
        for method, path in ADMIN_ROUTES:
            for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic s3cret"}):
                response = client.request(method, path, headers=headers, content=b"{}" if method == "PUT" else None)
                assert_refused(response, 401)
                assert response.headers["www-authenticate"].startswith("Bearer")
        assert client.get("/__mock__/health", headers={"Authorization": "Bearer s3cret"}).status_code == 200
        assert client.get(f"{BACKEND}/productlines/", headers=API_KEY_HEADERS).status_code == 200
    app = create_app(Settings(admin=False))
    with running(app) as origin, httpx.Client(base_url=origin, timeout=30) as client:
        for method, path in ADMIN_ROUTES:
            assert_refused(client.request(method, path), 404)
        assert client.get(f"{BACKEND}/productlines/", headers=API_KEY_HEADERS).status_code == 200


def test_a_non_loopback_bind_generates_a_token_and_the_banner_says_which() -> None:
    exposed = parse_settings(["--host", "0.0.0.0"])
    assert exposed.admin and exposed.admin_token and len(exposed.admin_token) >= 24
    assert f"Authorization: Bearer {exposed.admin_token}" in banner(exposed, 8000, "/shop/api/v1", "/customers/v1")
    assert parse_settings(["--host", "0.0.0.0", "--admin-token", "mine"]).admin_token == "mine"
    local = parse_settings([])
    assert (
        local.admin
        and local.admin_token is None
        and "no token: loopback only" in banner(local, 8000, "/shop/api/v1", "/customers/v1")
    )
    off = parse_settings(["--host", "0.0.0.0", "--no-admin"])
    assert (
        not off.admin
        and off.admin_token is None
        and "admin            off (--no-admin)" in banner(off, 8000, "/shop/api/v1", "/customers/v1")
    )
    with pytest.raises(SystemExit):
        parse_settings(["--no-admin", "--admin-token", "x"])


# --- bounded requests --------------------------------------------------------------------------------


def raw_exchange(origin: str, request: bytes, wait: float = 10) -> bytes:
    """Send `request` bytes as they are; whatever comes back until the server closes or `wait` ends."""
    host, port = origin.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=wait) as sock:
        with contextlib.suppress(OSError):  # the server may close before reading it all: its answer is there
            sock.sendall(request)
        answer = b""
        try:
            while chunk := sock.recv(65536):
                answer += chunk
        except (ConnectionResetError, TimeoutError):
            pass
    return answer


def status_of(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1])


@pytest.mark.parametrize(
    ("head", "status"),
    [
        (b"X-Big: " + b"a" * (LIMITS.head_bytes + 1) + b"\r\n", 431),
        (b"X-Huge: " + b"a" * (8 * 1024 * 1024) + b"\r\n", 431),
        (b"".join(b"X-H%d: v\r\n" % i for i in range(LIMITS.header_count + 1)), 431),
        (b"Cookie: " + b"c=1; " * 10_000 + b"\r\n", 431),
    ],
    ids=["one-over", "8-MiB-header", "too-many-headers", "big-cookie"],
)
def test_an_oversized_request_head_is_431_and_changes_nothing(
    mock: tuple[MockApp, httpx.Client], head: bytes, status: int
) -> None:
    client = mock[1]
    before = readable_state(client)
    answer = raw_exchange(str(client.base_url), b"POST /__mock__/reset HTTP/1.1\r\nHost: x\r\n" + head + b"\r\n")
    assert status_of(answer) == status and b"application/problem+json" in answer, answer[:300]
    assert readable_state(client) == before


def test_a_head_over_the_limit_in_two_reads_is_431(mock: tuple[MockApp, httpx.Client]) -> None:
    """The head is measured once complete, over every read that brought it: two reads each under the
    limit, together over it, are refused (the first read, where the request began, counts too)."""
    client = mock[1]
    half = b"X-Half: " + b"a" * (LIMITS.head_bytes * 2 // 3) + b"\r\n"
    host, port = str(client.base_url).removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(b"GET /shop/api/v1/productlines/ HTTP/1.1\r\nHost: x\r\nX-API-Key: dev-api-key\r\n" + half)
        time.sleep(0.2)  # two reads, not one
        sock.sendall(half.replace(b"X-Half", b"X-Other") + b"\r\n")
        answer = b""
        with contextlib.suppress(ConnectionResetError):
            while chunk := sock.recv(65536):
                answer += chunk
    assert status_of(answer) == 431, answer[:300]


def test_pipelined_answers_keep_their_order_and_a_head_answer_is_a_head(mock: tuple[MockApp, httpx.Client]) -> None:
    """Requests sent in one write are answered in order, each whole: a response head held for its
    body (`http.coalescing`) never waits for another's, and a HEAD answer is its head alone."""
    client = mock[1]
    one = b"GET /shop/api/v1/productlines/ HTTP/1.1\r\nHost: x\r\nX-API-Key: dev-api-key\r\n\r\n"
    head = one.replace(b"GET", b"HEAD", 1)
    last = one.replace(b"Host: x", b"Host: x\r\nConnection: close")
    answer = raw_exchange(str(client.base_url), one + head + last)
    parts = answer.split(b"HTTP/1.1 ")[1:]
    assert [part[:3] for part in parts] == [b"200"] * 3, answer[:600]
    for number, part in enumerate(parts):
        head_part, _, body = part.partition(b"\r\n\r\n")
        length = int(re.findall(rb"content-length: (\d+)", head_part)[0])
        assert len(body) == (0 if number == 1 else length), f"answer {number + 1}: {part[:300]!r}"
    assert json.loads(parts[0].partition(b"\r\n\r\n")[2])["results"]


def test_an_overlong_request_line_is_414(mock: tuple[MockApp, httpx.Client]) -> None:
    client = mock[1]
    answer = raw_exchange(
        str(client.base_url), b"GET /" + b"a" * (LIMITS.head_bytes + 1) + b" HTTP/1.1\r\nHost: x\r\n\r\n"
    )
    assert status_of(answer) == 414
    assert client.get("/__mock__/health").status_code == 200


def test_headers_within_the_limits_are_served(mock: tuple[MockApp, httpx.Client]) -> None:
    client = mock[1]
    headers = {f"X-H{i}": "v" * 200 for i in range(LIMITS.header_count - 10)}
    assert client.get(f"{BACKEND}/productlines/", headers=headers).status_code == 200


@pytest.mark.parametrize(
    "sent",
    [
        b"",
        b"GET /__mock__/health HTTP/1.1\r\nHost: x\r\n",
        b"POST /shop/api/v1/productlines/ HTTP/1.1\r\nHost: x\r\nX-API-Key: dev-api-key\r\n"
        b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{",
        b"GET /shop/api/v1/productlines/ HTTP/1.1\r\nHost: x\r\nX-API-Key: dev-api-key\r\n\r\n"
        b"GET /shop/api/v1/productlines/ HTTP/1.1\r\n",
    ],
    ids=["nothing", "half-a-head", "half-a-body", "half-the-next-head"],
)
def test_a_request_that_never_finishes_is_408_and_closed(mock: tuple[MockApp, httpx.Client], sent: bytes) -> None:
    client = mock[1]
    before = readable_state(client)
    started = time.monotonic()
    answer = raw_exchange(str(client.base_url), sent, wait=LIMITS.request_seconds * 4)
    assert time.monotonic() - started < LIMITS.request_seconds * 3, "the connection was held open"
    statuses = [int(status) for status in re.findall(rb"HTTP/1\.1 (\d{3}) ", answer)]
    assert statuses[-1:] == [408] and statuses[:-1] in ([], [200]), answer[:300]
    assert readable_state(client) == before


def test_each_request_of_a_connection_has_its_own_time(mock: tuple[MockApp, httpx.Client]) -> None:
    """One timer per connection, looking at the request being read when it fires: whole requests spread
    over more than the limit are all served, and a request left unfinished gets its full time, then 408."""
    host, port = str(mock[1].base_url).removeprefix("http://").split(":")
    whole = b"GET /shop/api/v1/productlines/ HTTP/1.1\r\nHost: x\r\nX-API-Key: dev-api-key\r\n\r\n"
    with (
        socket.create_connection((host, int(port)), timeout=LIMITS.request_seconds * 4) as sock,
        sock.makefile("rb") as reader,
    ):
        for _ in range(3):  # 2.7 s on the connection, more than the limit of 1.5 s
            sock.sendall(whole)
            assert reader.readline().startswith(b"HTTP/1.1 200 ")
            length = 0
            while (line := reader.readline()) not in (b"\r\n", b""):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            reader.read(length)
            time.sleep(LIMITS.request_seconds * 0.6)
        started = time.monotonic()
        sock.sendall(whole[:30])
        assert reader.readline().startswith(b"HTTP/1.1 408 ")
        assert LIMITS.request_seconds * 0.9 < time.monotonic() - started < LIMITS.request_seconds * 2


# --- the last resort -------------------------------------------------------------------------------


@pytest.mark.parametrize("fast_path", [True, False], ids=["fast-path", "connexion"])
@pytest.mark.parametrize("method", ["counted_page", "get", "create", "update", "export"])
def test_an_unexpected_exception_is_a_problem_500_logged_once(
    fast_path: bool, method: str, caplog: pytest.LogCaptureFixture
) -> None:
    app = create_app(Settings(fast_path=fast_path))

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("planted failure")

    request = {
        "counted_page": ("GET", f"{BACKEND}/products/", None),
        "get": ("GET", f"{BACKEND}/products/S10_1678/", None),
        "create": ("POST", f"{BACKEND}/productlines/", PRODUCTLINE),
        "update": ("PATCH", f"{BACKEND}/products/S10_1678/", {"productname": "x"}),
        "export": ("GET", "/__mock__/state", None),
    }[method]
    with running(app) as origin, httpx.Client(base_url=origin, headers=API_KEY_HEADERS, timeout=30) as client:
        before = readable_state(client)
        setattr(app.store, method, broken)
        with caplog.at_level(logging.ERROR):
            response = client.request(request[0], request[1], json=request[2])
        del app.store.__dict__[method]
        assert response.status_code == 500 and response.headers["content-type"] == "application/problem+json"
        assert response.json() == {
            "type": "about:blank",
            "title": "Internal Server Error",
            "status": 500,
            "detail": response.json()["detail"],
        }
        logged = [record for record in caplog.records if record.getMessage().startswith("Unexpected error")]
        assert len(logged) == 1 and "planted failure" in logged[0].getMessage(), caplog.text
        assert "Traceback" in logged[0].getMessage()  # the traceback, each part cut (http/middleware.log_unexpected)
        assert "coroutine" not in caplog.text
        assert readable_state(client) == before


@pytest.mark.parametrize("text", ["¹", "²3", "٣", "1½"])
@pytest.mark.parametrize("where", ["page", "page_size", "path"])
def test_digits_int_cannot_read_are_refused_not_a_500(
    mock: tuple[MockApp, httpx.Client], text: str, where: str
) -> None:
    """`str.isdigit` admits superscripts that `int()` refuses (found by the suite against the mock)."""
    client = mock[1]
    before = readable_state(client)
    url = f"{BACKEND}/customers/{text}/payments/" if where == "path" else f"{BACKEND}/products/?{where}={text}"
    response = client.get(url)
    assert response.status_code < 500, response.text
    if text != "٣":  # an Arabic-Indic digit is a number to int(), as to Connexion's coercion
        assert_refused(response)
    assert readable_state(client) == before


PREFER_DIGITS = [6, 4300, 4301, 5000]  # 6: past a delay's bound (60000 ms) yet readable


@pytest.mark.parametrize("digits", PREFER_DIGITS)
@pytest.mark.parametrize(
    ("preference", "method", "path", "body"),
    [
        ("code", "GET", "/products/S10_1678/", None),
        ("code", "POST", "/productlines/", b'{"productline": "Long Codes"}'),
        ("delay", "GET", "/products/S10_1678/", None),
        ("delay", "DELETE", "/products/S10_1678/", None),
    ],
)
def test_a_prefer_number_of_thousands_of_digits_is_400_naming_the_preference(
    mock: tuple[MockApp, httpx.Client], preference: str, method: str, path: str, body: bytes | None, digits: int
) -> None:
    """Python's int() refuses more than 4,300 digits: the one Prefer parser never hands it that many."""
    client = mock[1]
    before = readable_state(client)
    headers = {**JSON, "Prefer": f"{preference}={'9' * digits}"}
    response = send(client, (method, path, headers, body))
    assert_refused(response, 400)
    detail = response.json()["detail"]
    assert detail.startswith(f"Prefer: {preference} ") and len(detail) < 200, detail
    assert readable_state(client) == before


@pytest.mark.parametrize("path", ["/__mock__/requests", "/__mock__/requests/count"])
def test_journal_filters_of_thousands_of_digits_are_read_without_int(
    mock: tuple[MockApp, httpx.Client], path: str
) -> None:
    """An admin query parameter is counted before int() sees it, like any other integer of a request."""
    client = mock[1]
    client.get(f"{BACKEND}/products/S10_1678/")
    every = client.get(path).json()
    assert client.get(path, params={"limit": "9" * 5000}).json() == every  # more than there are: all
    assert client.get(path, params={"limit": "0" * 5000 + "1"}).status_code == 200
    refused = client.get(path, params={"status": "2" * 5000})
    assert_refused(refused, 400)
    assert refused.json()["detail"].startswith("status must be a status"), refused.text
