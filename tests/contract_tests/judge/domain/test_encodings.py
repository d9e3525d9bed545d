"""`body_encodings` on media types written in capitals (`media-type-case`): read as in lower case or
refused, both admitted; a 500 is caught by its broken variant (tests/support/shape_variants.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from contract_tests.judge.domain.media import MEDIA_TYPES, encoded, in_capitals
from mock_server.app import create_app
from mock_server.settings import Settings
from tests.support.faults import Scope, send_answer
from tests.support.live import running
from tests.support.suite import credentials, passed, shop_contract

BODY = {"productline": "Caps", "textdescription": "a b", "htmldescription": "<p>&amp;</p>"}


def test_a_body_in_capitals_is_the_body_httpx_sends_with_its_media_type_in_capitals() -> None:
    """The same bytes as the lower-case request (the multipart boundary fixed), only the type and subtype
    in capitals: a parameter's value, such as the boundary, stays as it was."""
    for media_type in MEDIA_TYPES:
        content, declared = in_capitals(BODY, media_type)
        kind, _, parameters = declared.partition(";")
        assert kind == media_type.upper()
        boundary = parameters.partition("boundary=")[2]
        headers = {"Content-Type": f"{media_type}; boundary={boundary}" if boundary else media_type}
        assert content == httpx.Request("POST", "http://x/", headers=headers, **encoded(BODY, media_type)).read()
        assert in_capitals(BODY, media_type) == (content, declared)  # what a seed sends stays the same


def refusing_capitals(app: Any) -> Any:
    """The mock behind a server that answers 415 to a media type not written in lower case, as one that
    compares it as written does."""

    async def served(scope: Scope, receive: Any, send: Any) -> None:
        declared = dict(scope.get("headers", [])).get(b"content-type", b"").partition(b";")[0]
        if scope["type"] == "http" and declared != declared.lower():
            await send_answer(send, (415, {"content-type": "application/problem+json"}, b'{"status": 415}'))
            return
        await app(scope, receive, send)

    return served


def test_a_service_refusing_a_media_type_in_capitals_is_not_reported(tmp_path: Path) -> None:
    with running(refusing_capitals(create_app(Settings()))) as origin:
        args = ["--base-url", f"{origin}/shop/api/v1", *credentials(origin), "--seed", "5", "--no-conformance"]
        outcome = shop_contract([*args, "--checks", "body_encodings", "--include", "create_product_line"], tmp_path)
    assert outcome.code == 0, outcome.stdout[-4000:] + outcome.stderr
    assert ("body_encodings", "create_product_line") in passed(outcome)
