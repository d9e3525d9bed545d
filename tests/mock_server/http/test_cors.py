"""CORS for browser front ends: any origin by default, configurable, preflight answered."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from starlette.middleware.cors import CORSMiddleware
from starlette.types import Message, Receive, Scope, Send

from mock_server.app import create_app
from mock_server.http.cors import CORS
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
