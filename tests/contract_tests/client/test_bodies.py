"""`response_decodable`: a body the suite cannot read as its Content-Type says is a violation of that
operation, its bytes shown escaped; the start-up probe still knows the API under a broken charset.

The broken variants of both mechanisms (a latin-1 encoder under a UTF-8 header, a UTF-16 declaration
over UTF-8 bytes) are in variants.py, run by test_broken_variants.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from contract_tests.client.bodies import declared_charset, lenient_json, text_codec, undecodable
from mock_server.app import create_app
from mock_server.settings import Settings
from tests.support.faults import Answer, Fault, Scope
from tests.support.live import running
from tests.support.suite import credentials, shop_contract, violations

API = "/shop/api/v1"
JSON = "application/json"
PAGE = json.dumps({"results": [{"city": "Luleå", "name": "Frédérique"}]}, ensure_ascii=False)


@pytest.mark.parametrize(
    ("body", "content_type", "said"),
    [
        (PAGE.encode("latin-1"), f"{JSON}; charset=utf-8", "a JSON body is UTF-8 (RFC 8259, 8.1); byte 27"),
        (PAGE.encode("latin-1"), JSON, "Lule\\xe5"),
        (PAGE.encode(), f"{JSON}; charset=utf-16", "declares charset=utf-16, but its bytes are UTF-8 JSON"),
        (PAGE.encode(), f"{JSON}; charset=latin-1", "declares charset=latin-1, but its bytes are UTF-8 JSON"),
        (PAGE.encode(), f"{JSON}; charset=x-unknown", "declares charset=x-unknown, no text encoding"),
        (PAGE.encode(), f"{JSON}; charset=rot13", "declares charset=rot13, no text encoding"),
        (PAGE.encode(), f"{JSON}; charset=\u202e", "declares charset=\\u202e, no text encoding"),
        (
            b"<p>\xff</p>",
            "text/html; charset=utf-8",
            "the body is not valid utf-8: byte 3 does not decode: <p>\\xff</p>",
        ),
    ],
    ids=["latin1_as_utf8", "latin1_no_charset", "utf16_lie", "latin1_lie", "unknown", "not_text", "bidi", "html"],
)
def test_a_body_that_cannot_be_read_as_it_says_is_named(body: bytes, content_type: str, said: str) -> None:
    problem = undecodable(body, content_type)
    assert problem is not None and said in problem, problem


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        (PAGE.encode(), JSON),
        (PAGE.encode(), f'{JSON}; charset="UTF-8"'),
        (b'{"a": "ascii"}', f"{JSON}; charset=iso-8859-1"),  # the same text either way
        (PAGE.encode("latin-1"), "text/plain; charset=latin-1"),
        (b"\x89PNG\xff", "image/png"),
        (b"", f"{JSON}; charset=x-unknown"),
    ],
)
def test_a_body_read_as_it_says_is_decodable(body: bytes, content_type: str) -> None:
    assert undecodable(body, content_type) is None


def test_every_reader_reads_a_lying_body_without_raising() -> None:
    assert lenient_json(PAGE.encode(), f"{JSON}; charset=utf-16") == json.loads(PAGE)
    assert lenient_json(PAGE.encode("latin-1"), f"{JSON}; charset=rot13")["results"][0]["city"] == "Lule\ufffd"
    assert declared_charset('text/html; q=1; Charset="utf-8"') == "utf-8"
    assert [text_codec(name) for name in ("UTF8", "rot13", "utf-8\x00", "undefined", None)] == ["utf-8", *[None] * 4]


def _latin1_lines(scope: Scope, answer: Answer) -> Answer:
    """The product lines' list as a latin-1 encoder under a UTF-8 header writes it."""
    status, headers, body = answer
    page: dict[str, Any] = json.loads(body)
    page["results"][0]["textdescription"] = "Société générale"
    return (
        status,
        {**headers, "content-type": f"{JSON}; charset=utf-8"},
        json.dumps(page, ensure_ascii=False).encode("latin-1"),
    )


def test_the_probe_answered_in_another_charset_is_this_api_and_a_violation(tmp_path: Path) -> None:
    """The start-up probe reads the list: in latin-1 it is still the API (not "wrong URL?"), and the run
    names the operation whose answer a client cannot read, its bytes escaped."""
    app = Fault(create_app(Settings()), "GET", f"{API}/productlines/", response=_latin1_lines)
    with running(app) as origin:
        args = ["--base-url", origin + API, *credentials(origin), "--seed", "5", "--profile", "fast", "--quiet"]
        outcome = shop_contract([*args, "--include", "list_product_lines", "--no-conformance"], tmp_path)
    assert outcome.code == 1, outcome.stderr
    found = [v for v in violations(outcome) if v["check"] == "response_decodable"]
    assert found and found[0]["operation"] == "list_product_lines", outcome.stdout[-2000:]
    assert "Soci\\xe9t\\xe9 g\\xe9n\\xe9rale" in found[0]["rule"] and "Soci\\xe9t\\xe9" in found[0]["response"]
    assert "[response_decodable]" in outcome.stdout
