"""Bad input never gives a 5xx and never changes state; concurrent writers leave a consistent store."""

from __future__ import annotations

import json
import threading
import time
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from mock_server.app import MockApp
from tests.conftest import API_KEY_HEADERS, BACKEND
from tests.mock_server.api.test_operations import PRODUCT

JSON = {"Content-Type": "application/json"}
LIMITS = {  # one over each limit of ProductRequest, and an empty string where one character is the least
    "productcode": "x" * 16,
    "productname": "x" * 71,
    "productscale": "x" * 11,
    "productvendor": "x" * 51,
    "productdescription": "",
    "quantityinstock": 32768,
    "buyprice": "123456789.00",
    "msrp": "1.001",
    "productline": "",
}

# (method, path, headers, body): each must be refused with a 4xx and change nothing
BAD_REQUESTS: list[tuple[str, str, dict[str, str], bytes | None]] = [
    ("POST", "/products/", JSON, b'{"productcode": '),
    ("POST", "/products/", JSON, b"\xff\xfe\x00garbage"),
    ("POST", "/products/", {"Content-Type": "text/plain"}, b"hello"),
    ("POST", "/products/", {}, b"productcode=x"),
    ("POST", "/products/", {"Content-Type": "multipart/form-data"}, b"--x\r\n"),
    ("POST", "/products/", {"Content-Type": "multipart/form-data; boundary=zz"}, b"--zz\r\nbroken"),
    ("POST", "/products/", JSON, b"[" * 50_000 + b"]" * 50_000),
    ("POST", "/products/", JSON, json.dumps({**PRODUCT, "quantityinstock": 10**400}).encode()),
    ("POST", "/products/", JSON, b'{"quantityinstock": NaN, "msrp": Infinity}'),
    ("POST", "/products/", JSON, json.dumps({**PRODUCT, "msrp": "NaN"}).encode()),
    ("POST", "/products/", JSON, json.dumps({**PRODUCT, "buyprice": "Infinity"}).encode()),
    ("POST", "/products/", JSON, b'"just a string"'),
    ("POST", "/products/", JSON, b"null"),
    ("POST", "/products/", JSON, b""),
    ("POST", "/customers/", JSON, json.dumps({"customernumber": 1.5}).encode()),
    ("POST", "/productlines/", JSON, json.dumps({"productline": "\u0000" * 51}).encode()),
    ("PATCH", "/products/S10_1678/", JSON, b'{"quantityinstock": "many"}'),
    ("PATCH", "/products/S10_1678/", JSON, b'{"msrp": 12.5, "productname": ["a"]}'),
    ("PUT", "/products/S10_1678/", JSON, b"{}"),
    ("PATCH", "/products/S10_1678/", JSON, b"null"),
    ("GET", "/products/a%2Fb/", {}, None),
    ("GET", "/products/%00/", {}, None),
    ("GET", "/products/" + "x" * 5000 + "/", {}, None),
    ("GET", "/customers/99999999999999999999999/", {}, None),
    ("GET", "/customers/-0x10/", {}, None),
    ("DELETE", "/productlines/..%2F..%2F/", {}, None),
    *[("GET", f"/products/?page={page}", {}, None) for page in ("0", "-1", "abc", "1" + "0" * 20, "1.5", "")],
    ("GET", "/products/?page_size=0", {}, None),
    ("GET", "/products/?page_size=-5&page_size=abc", {}, None),
    ("GET", "/products/?page=1&page=999", {}, None),
]


def snapshot(client: httpx.Client) -> Any:
    return client.get("/__mock__/state").json()


@pytest.mark.parametrize(("method", "path", "headers", "body"), BAD_REQUESTS)
def test_bad_input_is_a_4xx_that_changes_nothing(
    client: httpx.Client, method: str, path: str, headers: dict[str, str], body: bytes | None
) -> None:
    before = snapshot(client)
    response = client.request(method, f"{BACKEND}{path}", headers=headers, content=body)
    assert 400 <= response.status_code < 500, response.text
    assert response.headers["content-type"] == "application/problem+json"
    assert "Traceback" not in response.text
    assert snapshot(client) == before


@pytest.mark.parametrize(("field", "value"), sorted(LIMITS.items()))
@pytest.mark.parametrize("encoding", ["json", "form"])
def test_one_over_each_limit_is_400_naming_the_field(
    client: httpx.Client, field: str, value: Any, encoding: str
) -> None:
    body = {**PRODUCT, field: value}
    if encoding == "json":
        response = client.post(f"{BACKEND}/products/", json=body)
    else:
        response = client.post(f"{BACKEND}/products/", data={k: str(v) for k, v in body.items()})
    assert response.status_code == 400
    assert field in [error["field"] for error in response.json()["errors"]]


@pytest.mark.parametrize("text", ["Modèle réduit 🚗", "tab\there", "ctrl\x01char", "right-to-left \u202e"])
def test_unicode_and_control_characters_round_trip(client: httpx.Client, text: str) -> None:
    response = client.post(f"{BACKEND}/productlines/", json={"productline": text, "textdescription": text})
    assert response.status_code == 201
    read = client.get(f"{BACKEND}/productlines/{quote(text, safe='')}/")
    assert read.json() == response.json()
    assert read.json()["textdescription"] == text


def test_a_ten_megabyte_body_is_413_without_reading_it(http: httpx.Client) -> None:
    sent = 0

    def chunks() -> Any:
        nonlocal sent
        for _ in range(160):
            sent += 65536
            yield b"x" * 65536

    response = http.post(f"{BACKEND}/products/", content=chunks(), headers=JSON)
    assert response.status_code == 413
    assert sent < 10_000_000
    declared = http.post(f"{BACKEND}/products/", content=b"x" * 10_000_000, headers=JSON)
    assert declared.status_code == 413


@pytest.mark.parametrize(
    ("path", "allowed"),
    [
        ("/products/", {"GET", "POST"}),
        ("/products/S10_1678/", {"GET", "PUT", "PATCH", "DELETE"}),
        ("/customers/103/orders/", {"GET"}),
    ],
)
def test_unlisted_methods_are_405_with_the_spec_allow_header(
    client: httpx.Client, path: str, allowed: set[str]
) -> None:
    for method in {"GET", "POST", "PUT", "PATCH", "DELETE", "TRACE"} - allowed:
        response = client.request(method, f"{BACKEND}{path}")
        assert response.status_code == 405, method
        assert set(response.headers["allow"].split(", ")) - {"HEAD", "OPTIONS"} == allowed
    options = client.options(f"{BACKEND}{path}")
    assert options.status_code == 204
    assert set(options.headers["allow"].split(", ")) - {"HEAD", "OPTIONS"} == allowed


def test_concurrent_writers_leave_a_consistent_store(app: MockApp, live_origin: str) -> None:
    codes = [f"S99_{n:04d}" for n in range(12)]
    lines = ["Ships", "Planes", "Trains"]
    stop = time.monotonic() + 4
    failures: list[str] = []

    def writer(seed: int) -> None:
        with httpx.Client(base_url=live_origin, headers=API_KEY_HEADERS, timeout=30) as http:
            step = seed
            while time.monotonic() < stop:
                step += 7
                code, line = codes[step % len(codes)], lines[step % len(lines)]
                action = step % 4
                if action == 0:
                    response = http.post(
                        f"{BACKEND}/products/", json={**PRODUCT, "productcode": code, "productline": line}
                    )
                elif action == 1:
                    response = http.patch(
                        f"{BACKEND}/products/{code}/", json={"productline": line, "quantityinstock": step % 100}
                    )
                elif action == 2:
                    response = http.delete(f"{BACKEND}/products/{code}/")
                else:
                    response = http.post(f"{BACKEND}/productlines/", json={"productline": f"Line {step % 5}"})
                    http.delete(f"{BACKEND}/productlines/Line%20{step % 5}/")
                if response.status_code >= 500:
                    failures.append(f"{response.request.method} {response.request.url}: {response.status_code}")

    threads = [threading.Thread(target=writer, args=(seed,)) for seed in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert list(app.store.inconsistencies()) == []
    state = httpx.get(f"{live_origin}/__mock__/state").json()
    line_names = {line["productline"] for line in state["productlines"]}
    assert all(product["productline"] in line_names for product in state["products"])
    listed = httpx.get(f"{live_origin}{BACKEND}/products/?page_size=100", headers=API_KEY_HEADERS).json()
    assert listed["count"] == len(state["products"])


def test_a_chunked_body_under_the_limit_is_read(http: httpx.Client) -> None:
    payload = json.dumps(PRODUCT).encode()
    response = http.post(f"{BACKEND}/products/", content=iter([payload[:10], payload[10:]]), headers=JSON)
    assert response.status_code == 201
    assert response.json() == PRODUCT
