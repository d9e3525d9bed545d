"""CORS for browser front ends: any origin by default, configurable, preflight answered."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from starlette.middleware.cors import CORSMiddleware
from starlette.types import Message, Receive, Scope, Send

from mock_server.app import create_app
from mock_server.arguments import parse_settings
from mock_server.http.cors import CORS
from mock_server.http.hosts import serialized_origin
from mock_server.settings import Settings
from tests.conftest import BACKEND
from tests.support.live import running

RawHeaders = list[tuple[bytes, bytes]]
PREFLIGHT = {
    "Origin": "http://localhost:5173",
    "Access-Control-Request-Method": "POST",
    "Access-Control-Request-Headers": "content-type, x-api-key, authorization",
}


def test_a_preflight_is_answered_for_any_origin(api: httpx.Client) -> None:
    response = api.options(f"{BACKEND}/products/", headers=PREFLIGHT)
    assert response.status_code == 200
    assert response.headers["access-control-allow-origin"] == "*"
    assert "POST" in response.headers["access-control-allow-methods"]
    assert "x-api-key" in response.headers["access-control-allow-headers"].lower()
    assert "access-control-allow-credentials" not in response.headers


def test_errors_carry_cors_headers_too(api: httpx.Client) -> None:
    api.headers.pop("X-API-Key")
    response = api.get(f"{BACKEND}/products/", headers={"Origin": "http://localhost:5173"})
    assert response.status_code == 401
    assert response.headers["access-control-allow-origin"] == "*"
    assert "WWW-Authenticate" in response.headers["access-control-expose-headers"]


def test_configured_origins_are_the_only_ones_allowed() -> None:
    app = create_app(Settings(cors_origins=("http://app.example",)))
    with running(app) as origin:
        allowed = httpx.options(f"{origin}{BACKEND}/products/", headers={**PREFLIGHT, "Origin": "http://app.example"})
        refused = httpx.options(f"{origin}{BACKEND}/products/", headers=PREFLIGHT)
    assert allowed.headers["access-control-allow-origin"] == "http://app.example"
    assert refused.status_code == 400


@pytest.mark.parametrize(
    ("written", "sent"),
    [
        ("http://localhost:5173", "http://localhost:5173"),
        ("HTTP://LocalHost:80/", "http://localhost"),
        ("https://app.example:443", "https://app.example"),
        ("https://app.example:0443/", "https://app.example"),
        ("http://app.example:443", "http://app.example:443"),
        ("http://[::1]:5173", "http://[::1]:5173"),
        ("http://127.0.0.1:08080", "http://127.0.0.1:8080"),
        ("app://desktop", "app://desktop"),
        ("null", "null"),
    ],
)
def test_an_allowed_origin_is_compared_as_a_browser_sends_it(written: str, sent: str) -> None:
    assert serialized_origin(written) == sent
    assert parse_settings(["--cors-origin", written]).cors_origins == (sent,)


@pytest.mark.parametrize(
    "written",
    [
        "localhost:5173",
        "http://localhost:5173/app",
        "http://localhost:5173//",
        "http://localhost:5173?x=1",
        "http://localhost:5173#top",
        "http://user@app.example",
        "http://",
        "http://app.example:0",
        "http://app.example:65536",
        "http://app.example:port",
        "http://bücher.example",
        " http://app.example",
        "http://app.example\r\nX: y",
        "",
        "NULL ",
    ],
)
def test_a_cors_origin_no_browser_sends_is_one_line_and_exit_2(
    written: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert serialized_origin(written) is None
    with pytest.raises(SystemExit) as exit_info:
        parse_settings(["--cors-origin", written])
    assert exit_info.value.code == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error.startswith("shop-mock: error: --cors-origin must be an origin as a browser sends it")
    assert error.endswith(f"not {written!r}")


def test_an_origin_written_another_way_lets_the_browser_in() -> None:
    """Written with capitals, its default port and a "/", the origin allowed no page at all: CORS compares text."""
    app = create_app(parse_settings(["--cors-origin", "HTTP://App.Example:80/", "--port", "0"]))
    with running(app) as origin:
        allowed = httpx.options(f"{origin}{BACKEND}/products/", headers={**PREFLIGHT, "Origin": "http://app.example"})
        other = httpx.options(f"{origin}{BACKEND}/products/", headers=PREFLIGHT)
    assert allowed.status_code == 200
    assert allowed.headers["access-control-allow-origin"] == "http://app.example"
    assert other.status_code == 400


def start_message(middleware: type[CORSMiddleware], method: str, headers: RawHeaders, answer: RawHeaders) -> Message:
    """The start of the answer `middleware` lets through for a request with `headers`, the app answering `answer`."""

    async def inner(scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": list(answer)})
        await send({"type": "http.response.body", "body": b"{}"})

    sent: list[Message] = []

    async def send(message: Message) -> None:
        sent.append(message)

    async def receive() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    app = middleware(inner, allow_origins=["http://app.example"], allow_methods=["GET"], expose_headers=["Allow"])
    scope = {"type": "http", "method": method, "path": "/", "headers": headers}
    asyncio.run(app(scope, receive, send))
    return sent[0]


@pytest.mark.parametrize(
    ("method", "headers"),
    [
        ("GET", [(b"host", b"x")]),
        ("GET", [(b"origin", b"http://app.example")]),
        ("GET", [(b"origin", b"http://other.example")]),
        ("OPTIONS", [(b"origin", b"http://app.example"), (b"access-control-request-method", b"GET")]),
    ],
)
@pytest.mark.parametrize(
    "answer",
    [[], [(b"content-type", b"application/json")], [(b"vary", b"Accept"), (b"x", b"1"), (b"vary", b"Cookie")]],
)
def test_the_cheaper_cors_answers_as_starlettes(method: str, headers: RawHeaders, answer: RawHeaders) -> None:
    """`CORS` takes a shorter way for a request without Origin: the answer's headers are Starlette's."""
    ours = start_message(CORS, method, headers, answer)
    assert ours == start_message(CORSMiddleware, method, headers, answer)
