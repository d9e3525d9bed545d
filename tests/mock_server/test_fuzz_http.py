"""Hypothesis over raw HTTP requests (method, path, headers, body bytes) against the live mock: never a
5xx, and the state stays readable. Long: marked `slow`, it runs in `tox -e fuzz`
(`FUZZ_HTTP_EXAMPLES` sets the budget, 300 by default)."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from urllib.parse import quote

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mock_server.app import create_app
from mock_server.http.limits import Limits, uvicorn_options
from mock_server.settings import Settings
from mock_server.spec.schemas import load_spec
from tests.conftest import API_KEY_HEADERS, BACKEND
from tests.mock_server.test_hostile_input import readable_state
from tests.support.live import running

EXAMPLES = int(os.environ.get("FUZZ_HTTP_EXAMPLES", "300"))
TEMPLATES = [f"{BACKEND}{path}" for path in load_spec()["paths"]] + ["/__mock__/state", "/__mock__/reset"]
TOKENS = ["Classic Cars", "S10_1678", "103", "1" * 4301, "x\udcff", "..", "%", "/", "\x00", "🚗", ""]


def encoded(text: str) -> str:
    return quote(text.encode("utf-8", "surrogatepass"), safe="")


paths = st.builds(
    lambda template, values: (
        template.replace("{productline}", values[0])
        .replace("{productcode}", values[1])
        .replace("{customernumber}", values[2])
    ),
    st.sampled_from(TEMPLATES),
    st.lists(
        st.one_of(st.sampled_from(TOKENS), st.text()).map(encoded) | st.binary(max_size=20).map(quote),
        min_size=3,
        max_size=3,
    ),
)
queries = st.lists(
    st.tuples(
        st.sampled_from(["page", "page_size", "x", ""]), st.one_of(st.sampled_from(TOKENS), st.text()).map(encoded)
    ),
    max_size=3,
).map(lambda pairs: "&".join(f"{name}={value}" for name, value in pairs))
header_values = st.binary(max_size=60).map(lambda raw: raw.replace(b"\r", b"").replace(b"\n", b""))
headers = st.lists(
    st.tuples(
        st.sampled_from([b"content-type", b"x-api-key", b"authorization", b"origin", b"transfer-encoding", b"x-any"]),
        st.one_of(
            st.sampled_from(
                [
                    b"application/json",
                    b"application/x-www-form-urlencoded",
                    b"multipart/form-data; boundary=zz",
                    b"multipart/form-data",
                    b"text/plain",
                    b"dev-api-key",
                    b"Bearer x.y.z",
                    b"http://evil.example",
                    b"chunked",
                ]
            ),
            header_values,
        ),
    ),
    max_size=4,
)
bodies = st.one_of(
    st.just(b""),
    st.binary(max_size=200),
    st.sampled_from([b'{"productline": "x\\ud800"}', b"productline=%FF", b"[" * 5000, b"--zz\r\n\xff\r\n--zz--"]),
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(),
        lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=12), children, max_size=4),
        max_leaves=10,
    ).map(lambda value: repr(value).encode("utf-8", "surrogatepass")),
)


@pytest.fixture(scope="module")
def origin() -> Iterator[str]:
    with running(create_app(Settings()), **uvicorn_options(Limits(request_seconds=3))) as served:
        yield served


def exchange(origin: str, request: bytes) -> bytes:
    host, port = origin.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(request)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    return answer


@pytest.mark.slow
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    method=st.sampled_from(["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD"]),
    path=paths,
    query=queries,
    extra=headers,
    body=bodies,
)
def test_no_raw_request_gets_a_5xx(
    origin: str, method: str, path: str, query: str, extra: list[tuple[bytes, bytes]], body: bytes
) -> None:
    target = f"{path}?{query}" if query else path
    lines = [f"{method} {target} HTTP/1.1".encode(), f"Host: {origin.removeprefix('http://')}".encode()]
    lines += [name + b": " + value for name, value in extra]
    chunked = any(name == b"transfer-encoding" for name, _ in extra)
    if not chunked:
        lines.append(b"Content-Length: %d" % len(body))
    lines.append(b"Connection: close")
    payload = (b"%x\r\n" % len(body) + body + b"\r\n0\r\n\r\n" if body else b"0\r\n\r\n") if chunked else body
    answer = exchange(origin, b"\r\n".join(lines) + b"\r\n\r\n" + payload)
    assert answer.startswith(b"HTTP/1.1 "), answer[:200]
    status = int(answer.split(b" ", 2)[1])
    assert status < 500, answer[:1000]


@pytest.mark.slow
def test_the_state_is_readable_after_the_fuzz(origin: str) -> None:
    with httpx.Client(base_url=origin, headers=API_KEY_HEADERS, timeout=30) as client:
        readable_state(client)
