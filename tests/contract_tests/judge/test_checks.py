"""The domain checks Schemathesis runs on each answer (contract_tests/judge/checks.py): one parse of its body."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pytest

from contract_tests.client import bodies
from contract_tests.judge import checks


def test_an_answers_body_is_parsed_once_for_every_check(monkeypatch: pytest.MonkeyPatch) -> None:
    parsed: list[bytes] = []

    def counted(content: bytes, content_type: str | None) -> Any:
        parsed.append(content)
        return bodies.lenient_json(content, content_type)

    monkeypatch.setattr(checks, "lenient_json", counted)
    item = {"productline": "Planes", "productname": "parsed once"}  # a body no other test sends: not kept yet
    body = {"count": 1, "next": None, "previous": None, "results": [item]}
    content = json.dumps(body).encode()
    request = SimpleNamespace(url="http://127.0.0.1:9/shop/api/v1/productlines/Planes/products/")
    response = SimpleNamespace(
        status_code=200, content=content, headers={"content-type": ["application/json"]}, request=request
    )
    case = SimpleNamespace(method="GET", path_parameters={"productline": "Planes"}, body=None)
    for check in (checks.pagination_page, checks.list_scoping, checks.item_identity):
        check(None, response, case)
    assert parsed == [content]
    with pytest.raises(AssertionError, match="listed under productline='Vintage'"):  # the same verdicts
        checks.list_scoping(None, response, SimpleNamespace(method="GET", path_parameters={"productline": "Vintage"}))
