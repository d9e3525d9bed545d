"""The validation proxy over real HTTP: the mock in front of a real backend on another port.

Backends: the mock itself (a correct implementation: nothing to report, every answer passed on
unchanged), the broken variants of tests/support/variants.py whose defect is in the answer's
status, content type or schema (each violation reported), and for the fallback a backend that
does not serve an operation or is not there at all.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

import httpx
import pytest

from mock_server.app import create_app
from mock_server.arguments import parse_settings
from mock_server.settings import Settings
from tests.conftest import API_KEY_HEADERS, BACKEND
from tests.support.faults import Fault
from tests.support.live import TRUSTED, running
from tests.support.ports import free_port
from tests.support.variants import VARIANTS

PRODUCT = f"{BACKEND}/products/S10_1678/"
# variant -> a request that meets its defect (the variants' own `include` names the operation)
TRIGGERS = {
    "create_answers_200": ("POST", f"{BACKEND}/productlines/", {"productline": "Rockets"}),
    "product_without_msrp": ("GET", PRODUCT, None),
    "stock_as_string": ("GET", f"{BACKEND}/products/", None),
    "price_with_three_decimals": ("GET", f"{BACKEND}/products/", None),
    "server_error_on_large_pages": ("GET", f"{BACKEND}/products/?page_size=50", None),
    "text_plain_content_type": ("GET", f"{BACKEND}/productlines/Motorcycles/", None),
}


def client(origin: str) -> httpx.Client:
    return httpx.Client(base_url=origin, headers=API_KEY_HEADERS, timeout=30, verify=TRUSTED)


@pytest.fixture
def backend() -> Iterator[str]:
    with running(create_app(Settings())) as origin:
        yield origin


def test_in_front_of_a_correct_backend_answers_are_unchanged_and_nothing_is_reported(backend: str) -> None:
    exchanges = [
        ("GET", PRODUCT, None, API_KEY_HEADERS),
        ("GET", f"{BACKEND}/products/?page=2&page_size=5", None, API_KEY_HEADERS),
        ("GET", f"{BACKEND}/products/NOPE/", None, API_KEY_HEADERS),
        ("GET", PRODUCT, None, {}),  # 401
        ("POST", f"{BACKEND}/productlines/", {"productline": "Rockets"}, API_KEY_HEADERS),
        ("PATCH", f"{BACKEND}/productlines/Rockets/", {"textdescription": "Up."}, API_KEY_HEADERS),
        ("DELETE", f"{BACKEND}/productlines/Rockets/", None, API_KEY_HEADERS),
        ("DELETE", PRODUCT, None, API_KEY_HEADERS),  # 409
    ]
    with running(create_app(Settings(proxy=backend, fixtures=None))) as front, client(front) as http:
        with client(backend) as direct:
            for method, url, body, headers in exchanges:
                key = {"X-API-Key": headers.get("X-API-Key", "")}  # "" for the 401
                proxied = http.request(method, url, json=body, headers=key)
                assert proxied.status_code < 500, proxied.text
                if method == "GET":  # a read changes nothing: the backend answers it the same directly
                    plain = direct.request(method, url, headers=key)
                    assert (proxied.status_code, proxied.content) == (plain.status_code, plain.content)
            served = direct.get("/__mock__/requests", params={"method": "POST"}).json()
            assert [(entry["path"], entry["status"]) for entry in served] == [(f"{BACKEND}/productlines/", 201)]
        assert http.get("/__mock__/violations").json() == []
        assert http.get("/__mock__/health").json()["counts"]["products"] == 0  # the front's own state: untouched
        entries = http.get("/__mock__/requests").json()
        assert len(entries) == len(exchanges) and all(entry["violations"] == [] for entry in entries)


def test_a_request_that_breaks_the_spec_is_reported_and_still_forwarded(backend: str) -> None:
    with running(create_app(Settings(proxy=backend))) as front, client(front) as http:
        response = http.post(f"{BACKEND}/productlines/", json={"textdescription": "no identifier"})
        assert response.status_code == 400  # the backend's own answer
        violations = http.get("/__mock__/violations").json()
        assert [(v["part"], v["operationId"]) for v in violations] == [("request", "create_product_line")]
        assert "productline" in violations[0]["message"]
        entry = http.get("/__mock__/requests").json()[-1]
        assert entry["violations"] == [f"request: {violations[0]['message']}"]


@pytest.mark.parametrize("variant", [v for v in VARIANTS if v.name in TRIGGERS], ids=str)
def test_every_violation_of_a_broken_backend_is_reported_and_logged(
    variant: object, caplog: pytest.LogCaptureFixture
) -> None:
    method, url, body = TRIGGERS[str(variant)]
    with running(variant.build()) as broken, client(broken) as direct:  # type: ignore[attr-defined]
        answer = direct.request(method, url, json=body)
        with (
            running(create_app(Settings(proxy=broken))) as front,
            client(front) as http,
            caplog.at_level(logging.WARNING, logger="mock_server.proxy"),
        ):
            direct.post("/__mock__/reset")
            proxied = http.request(method, url, json=body)
            violations = http.get("/__mock__/violations").json()
    assert (proxied.status_code, proxied.content) == (answer.status_code, answer.content)  # passed on unchanged
    assert violations, f"{variant}: nothing reported"
    assert all(v["part"] == "response" and v["operationId"] in variant.include for v in violations)  # type: ignore[attr-defined]
    if "results." in violations[0]["message"]:  # a page's items: each one that breaks the schema is reported
        reported = {v["message"].split(":")[1].strip().split(".")[1] for v in violations}
        assert reported == {str(index) for index in range(len(answer.json()["results"]))}
    lines = [record.getMessage() for record in caplog.records if record.name == "mock_server.proxy"]
    assert len(lines) == len(violations) and all(
        v["message"] in line for v, line in zip(violations, lines, strict=True)
    )


def test_fallback_answers_what_the_backend_does_not_serve_from_the_mock() -> None:
    def not_implemented(scope: object) -> tuple[int, dict[str, str], bytes]:
        return 501, {"content-type": "application/problem+json"}, b'{"detail": "not yet"}'

    partial = Fault(create_app(Settings()), "GET", f"{BACKEND}/products/", respond=not_implemented)
    with running(partial) as backend:
        with (
            running(create_app(Settings(proxy=backend, proxy_fallback=True, fixtures=None))) as front,
            client(front) as http,
        ):
            assert http.get(f"{BACKEND}/products/").json()["count"] == 0  # the front mock's own (empty) state
            assert http.get(PRODUCT).status_code == 200  # the backend serves this one
            assert http.get(f"{BACKEND}/products/S99_9999/").status_code == 404  # 404: the mock's own answer
            assert http.get("/__mock__/violations").json() == []
        with running(create_app(Settings(proxy=backend, fixtures=None))) as front, client(front) as http:
            assert http.get(f"{BACKEND}/products/").status_code == 501  # without fallback: passed on, and reported
            assert "status 501 is not declared" in http.get("/__mock__/violations").json()[0]["message"]


def test_a_backend_that_is_not_there_is_502_or_the_mock_with_fallback() -> None:
    nowhere = f"http://127.0.0.1:{free_port()}"
    with running(create_app(Settings(proxy=nowhere))) as front, client(front) as http:
        response = http.get(PRODUCT)
        assert response.status_code == 502 and nowhere in response.json()["detail"]
    with running(create_app(Settings(proxy=nowhere, proxy_fallback=True))) as front, client(front) as http:
        assert http.get(PRODUCT).status_code == 200


def test_the_proxy_options(capsys: pytest.CaptureFixture[str]) -> None:
    settings = parse_settings(["--proxy", "http://127.0.0.1:9000/base", "--proxy-fallback", "--proxy-timeout", "2.5"])
    assert (settings.proxy, settings.proxy_fallback, settings.proxy_timeout) == (
        "http://127.0.0.1:9000/base",
        True,
        2.5,
    )
    assert parse_settings(["--proxy", "http://127.0.0.1:9000"]).proxy_timeout == Settings().proxy_timeout == 30
    for argv, named in (
        (["--proxy", "127.0.0.1:9000"], "--proxy must be an absolute http(s) URL"),
        (["--proxy-fallback"], "--proxy-fallback needs --proxy URL"),
        (["--proxy-timeout", "5"], "--proxy-timeout needs --proxy URL"),
        *(
            (["--proxy", "http://127.0.0.1:9000", "--proxy-timeout", seconds], "--proxy-timeout must be a positive")
            for seconds in ("0", "-1", "nan", "inf")
        ),
    ):
        with pytest.raises(SystemExit) as exit_info:
            parse_settings(argv)
        assert exit_info.value.code == 2
        assert named in capsys.readouterr().err.splitlines()[-1]
