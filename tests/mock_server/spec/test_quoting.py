"""One rule bounds what the mock quotes back or logs of what a client sent (mock_server/spec/quoting.py):
a client's value in an error's detail, on real uvicorn; an unexpected exception's text in the log."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st
from starlette.types import Receive, Scope, Send

from mock_server.app import create_app
from mock_server.http.middleware import LastResort
from mock_server.settings import DEFAULT_API_KEY, Settings
from mock_server.spec.quoting import MESSAGE_CHARS, QUOTED, printable, quote
from tests.support.live import running

HUGE = "Z" * 20_000  # a client's value: the request head's limit is 32 KiB
KEY = {"X-API-Key": DEFAULT_API_KEY}
QUOTED_HUGE = quote(HUGE)


@pytest.fixture(scope="module")
def http() -> Iterator[httpx.Client]:
    with running(create_app(Settings())) as origin, httpx.Client(base_url=origin, timeout=10) as client:
        yield client


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("GET", f"/__mock__/requests?limit={HUGE}", None),
        ("GET", f"/__mock__/requests?status={HUGE}", None),
        ("GET", f"/__mock__/requests?operationId={HUGE}", None),
        ("GET", f"/__mock__/requests?since={HUGE}", None),
        ("GET", f"/__mock__/requests?{HUGE}=1", None),
        ("GET", f"/__mock__/contract?format={HUGE}", None),
        ("DELETE", f"/__mock__/sessions/{HUGE}", None),
        ("GET", f"/shop/api/v1/products/{HUGE}/", None),  # routing: no item with that identifier
        ("PUT", f"/shop/api/v1/productlines/{HUGE}/", {"productline": "Rockets"}),
        ("PUT", "/__mock__/faults", [{"fault": HUGE}]),
        ("PUT", "/__mock__/faults", [{"fault": "drop", "operationId": HUGE}]),
        ("PUT", "/__mock__/faults", [{"fault": "status", "status": [HUGE]}]),
    ],
)
def test_a_clients_value_is_quoted_back_cut(http: httpx.Client, method: str, path: str, body: object) -> None:
    answer = http.request(method, path, json=body, headers=KEY)
    assert 400 <= answer.status_code < 500
    detail = answer.json()["detail"]
    assert "ZZZ" in detail and "..." in detail  # the value is named, cut
    assert detail.count("Z") <= QUOTED and len(detail) < MESSAGE_CHARS, detail


@pytest.mark.parametrize(
    ("path", "headers", "body"),
    [
        (f"/shop/api/v1/products/?page={HUGE}", {}, None),  # the validator's message quotes the value
        ("/shop/api/v1/productlines/", {}, {"productline": HUGE}),
        ("/shop/api/v1/products/S10_1678/", {"Prefer": f"example={HUGE}"}, None),
    ],
)
def test_every_problem_body_is_bounded_whatever_its_message_quotes(
    http: httpx.Client, path: str, headers: dict[str, str], body: object
) -> None:
    answer = http.request("GET" if body is None else "POST", path, json=body, headers={**KEY, **headers})
    assert answer.status_code == 400
    problem = answer.json()
    assert len(problem["detail"]) <= MESSAGE_CHARS + 50
    assert all(len(error["message"]) <= MESSAGE_CHARS + 50 for error in problem.get("errors", []))


async def failing(scope: Scope, receive: Receive, send: Send) -> None:
    try:
        raise KeyError(HUGE)  # an exception quoting a client's value (a chained one as well)
    except KeyError as error:
        raise ValueError(f"cannot use {HUGE}") from error


def test_an_unexpected_exceptions_text_is_logged_cut_with_its_traceback(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR, logger="mock_server"), running(LastResort(failing)) as origin:
        answer = httpx.get(origin + "/anything")
    assert answer.status_code == 500 and answer.headers["content-type"] == "application/problem+json"
    [record] = [record for record in caplog.records if record.name == "mock_server"]
    logged = record.getMessage() + (record.exc_text or "")
    assert "Traceback" in logged and "ValueError: cannot use ZZZ" in logged and "KeyError: 'ZZZ" in logged
    assert logged.count("Z") < 6 * MESSAGE_CHARS, len(logged)  # three texts (repr, two messages), each cut
    assert len(logged) < 20 * MESSAGE_CHARS


@given(st.text())
def test_printable_leaves_no_character_a_terminal_acts_on_and_only_escapes(text: str) -> None:
    shown = printable(text)
    assert shown.isprintable()
    assert shown == text or not text.isprintable()


def test_printable_writes_an_escape_a_line_feed_and_a_line_separator_as_their_escapes() -> None:
    assert printable("a\x1b[2J\n\u2028é") == "a\\x1b[2J\\n\\u2028é"
