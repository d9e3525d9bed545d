"""`header_names`: one pass over a request's headers, shared by the layers, never stale."""

from __future__ import annotations

from typing import Any

from mock_server.control.prefer import Preferences, preferences
from mock_server.http.header_names import header_names
from mock_server.spec.operations import Operation


def test_names_are_lower_case_and_taken_once_per_header_list() -> None:
    headers = [(b"Host", b"x"), (b"prefer", b"code=404")]
    scope: dict[str, Any] = {"headers": headers}
    assert header_names(scope) == {b"host", b"prefer"}
    headers.append((b"origin", b"http://app.example"))  # the same list: no layer changes one in place
    assert b"origin" not in header_names(scope)


def test_a_scope_with_other_headers_gets_its_own_names() -> None:
    scope: dict[str, Any] = {"headers": [(b"origin", b"http://app.example")]}
    assert b"origin" in header_names(scope)
    inner = {**scope, "headers": [(b"host", b"x")]}  # as AdminGuard hands on a request without Origin
    assert header_names(inner) == {b"host"}


def test_prefer_is_read_whatever_the_case_of_its_name() -> None:
    operation = Operation("get_product", "GET", "/products/{productcode}/", "backend", {"200": {}, "404": {}}, {})
    assert preferences({"headers": [(b"PREFER", b"code=404")]}, operation) == Preferences(code=404)
    assert preferences({"headers": [(b"host", b"x")]}, operation) is None
