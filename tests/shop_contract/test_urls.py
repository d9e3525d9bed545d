"""`shop_contract.urls`: a URL either command line accepts is one both HTTP clients can send to."""

from __future__ import annotations

import urllib.request

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shop_contract.urls import shown, url_problem

UNUSABLE = [  # Each URL, and the start of what either command line says of it (no query: a token URL may hold one).
    ("http://[::1/x", "is not a URL (Invalid IPv6 URL)"),
    ("http://[zz]/x", "is not a URL"),
    ("http://127.0.0.1:abc/x", "is not a URL (Port could not be cast"),
    ("http://127.0.0.1:99999/x", "is not a URL (Port out of range"),
    ("http://127.0.0.1:+80/x", "is not a URL"),
    ("http://999.1.1.1/x", "is not a URL (Invalid IPv4 address"),
    ("http://¡/x", "is not a URL (Invalid IDNA hostname"),
    ("http://127.0.0.1:0/x", "must name a port from 1 to 65535"),
    ("http://user:s3cret-pass@127.0.0.1:1/x", "must not hold credentials"),
    ("http://@127.0.0.1:1/x", "must not hold credentials"),
    ("http://127.0.0.1:1/x#part", "must not hold a"),
    ("http://exa mple/x", "must not hold a space or a control character"),
    ("http://127.0.0.1:1/x\r\nX-Injected: 1", "must not hold a space or a control character"),
    ("http://127.0.0.1:1/x\u200b", "must not hold a space or a control character"),
    ("ftp://127.0.0.1:1/x", "must be an absolute http(s) URL"),
    ("127.0.0.1:9000", "must be an absolute http(s) URL"),
]
SCHEMES = st.sampled_from(["http://", "https://", "ftp://", "", "http:/", "HTTP://"])
HOSTS = st.sampled_from(["h", "127.0.0.1", "[::1]", "[::1", "[zz]", "exa mple", "é.example", "", "u:p@h", "@h", "h\t"])
PORTS = st.sampled_from(["", ":", ":80", ":0", ":99999", ":+1", ":abc", ":065535", ":٨٠"])
PATHS = st.sampled_from(["", "/", "/x", "/shop/api/v1", "/%2F", "/x y", "/x\r\nX: 1", "/\u200b"])
TAILS = st.sampled_from(["", "?q=1", "#f", "?", "#"])
URLS = st.tuples(SCHEMES, HOSTS | st.text(max_size=3), PORTS, PATHS | st.text(max_size=3), TAILS).map("".join)


@settings(max_examples=500)
@given(URLS, st.booleans())
def test_a_url_accepted_is_sent_by_httpx_and_urllib_to_its_host_and_port(url: str, query: bool) -> None:
    if url_problem(url, query=query) is not None:
        return
    parsed = httpx.URL(url)  # The suite's client; the mock's proxy too.
    assert parsed.scheme in ("http", "https") and parsed.host and parsed.userinfo == b""
    assert parsed.port is None or 1 <= parsed.port <= 65535
    assert not parsed.fragment and (query or not parsed.query)
    assert urllib.request.Request(url).host  # `shop-mock contract` reads with urllib.


@pytest.mark.parametrize(("url", "words"), UNUSABLE)
@pytest.mark.parametrize("query", [False, True])
def test_each_unusable_url_is_refused_for_what_is_wrong(url: str, words: str, query: bool) -> None:
    problem = url_problem(url, query=query)
    assert problem is not None and problem.startswith(words) and "s3cret" not in problem


def test_the_problem_names_what_is_wrong_and_never_echoes_a_password() -> None:
    assert url_problem("http://127.0.0.1:8000/shop/api/v1") is None
    assert url_problem("https://login.example/token?p=B2C_1_signin", query=True) is None
    assert url_problem("https://login.example/token?p=B2C_1_signin") == (
        "must not hold a query or a fragment, got 'https://login.example/token?p=B2C_1_signin'"
    )
    assert url_problem("http://user:s3cret@h/x") == "must not hold credentials (user:password@)"
    assert url_problem("http://h/x\r\nX: 1") == "must not hold a space or a control character"
    assert url_problem("http://[::1") == "is not a URL (Invalid IPv6 URL): 'http://[::1'"


SECRET = "Zq9-s3cret"
USERINFO = st.sampled_from([f":{SECRET}@", f"user:{SECRET}@", f"{SECRET}@", f"u:{SECRET}:x@", f"a@{SECRET}@", ""])
STATE_URLS = st.tuples(
    st.sampled_from(["redis://", "rediss://", "unix://", "http://"]),
    USERINFO,
    HOSTS | st.text(max_size=3),
    PORTS,
    PATHS | st.text(max_size=3),
    st.sampled_from(["", f"?password={SECRET}", f"?db=0&PASSWORD={SECRET}&x=1", "?db=0", "#f"]),
).map("".join)


@given(STATE_URLS)
def test_a_url_shown_never_holds_its_password_and_keeps_the_rest(url: str) -> None:
    text = shown(url)
    assert SECRET not in text
    if "@" not in url and "password=" not in url.lower():
        assert text == url


def test_a_url_shown_masks_the_password_only() -> None:
    assert shown("redis://:pw@h:6379/0") == "redis://:***@h:6379/0"
    assert shown("redis://user:pw@h/0?db=1") == "redis://user:***@h/0?db=1"
    assert shown("redis://pw@h") == "redis://***@h"  # One name alone may be a password.
    assert shown("unix:///run/redis.sock?db=0&password=pw") == "unix:///run/redis.sock?db=0&password=***"
    assert shown("memory") == "memory"
