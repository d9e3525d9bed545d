"""The domain checks Schemathesis runs on each answer (contract_tests/judge/checks.py): one parse of its body."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pytest
from schemathesis.core.parameters import ParameterLocation

from contract_tests.client import bodies
from contract_tests.judge import checks


def json_answer(body: Any, url: str) -> Any:
    """A 200 answer carrying `body` as JSON to a GET of `url`, as the checks read it."""
    request = SimpleNamespace(url=url)
    headers = {"content-type": ["application/json"]}
    return SimpleNamespace(status_code=200, content=json.dumps(body).encode(), headers=headers, request=request)


def test_an_answers_body_is_parsed_once_for_every_check(monkeypatch: pytest.MonkeyPatch) -> None:
    parsed: list[bytes] = []

    def counted(content: bytes, content_type: str | None) -> Any:
        parsed.append(content)
        return bodies.lenient_json(content, content_type)

    monkeypatch.setattr(checks, "lenient_json", counted)
    item = {"productline": "Planes", "productname": "parsed once"}  # a body no other test sends: not kept yet
    body = {"count": 1, "next": None, "previous": None, "results": [item]}
    response = json_answer(body, "http://127.0.0.1:9/shop/api/v1/productlines/Planes/products/")
    case = SimpleNamespace(method="GET", path_parameters={"productline": "Planes"}, body=None)
    for check in (checks.pagination_page, checks.list_scoping, checks.item_identity):
        check(None, response, case)
    assert parsed == [response.content]
    with pytest.raises(AssertionError, match="listed under productline='Vintage'"):  # the same verdicts
        checks.list_scoping(None, response, SimpleNamespace(method="GET", path_parameters={"productline": "Vintage"}))


LIST = "http://127.0.0.1:9/shop/api/v1/products/"


def page_answer(query: str, count: int, shown: int, next_link: Any = None, previous: Any = None) -> Any:
    """A 200 list page of `shown` items out of `count`, answering a GET of LIST?`query`."""
    body = {"count": count, "next": next_link, "previous": previous, "results": [{"n": i} for i in range(shown)]}
    return json_answer(body, f"{LIST}?{query}" if query else LIST)


def list_case(clamp: Any = None) -> Any:
    """A GET of LIST whose `page_size` parameter documents `clamp` as its `x-clamped-maximum` (None: none)."""
    schema = {"type": "integer"} if clamp is None else {"type": "integer", "x-clamped-maximum": clamp}
    parameters = [
        SimpleNamespace(name="page", definition={}),
        SimpleNamespace(name="page_size", definition={"schema": schema}),
    ]
    return SimpleNamespace(method="GET", path_parameters={}, body=None, operation=SimpleNamespace(query=parameters))


@pytest.mark.parametrize(
    ("answer", "broken"),
    [
        (page_answer("page_size=2", 9, 3, f"{LIST}?page=2&page_size=2"), "page_size=2 but the page holds 3"),
        (page_answer("", 2, 3), "count=2 cannot hold the 3 results"),
        (page_answer("", 5, 2), "`next` is null on page 1, but count=5"),
        (page_answer("page=2&page_size=2", 4, 2, f"{LIST}?page=3&page_size=2", LIST), "`next` is set, but page 2"),
        (
            page_answer("page=2&page_size=2", 9, 2, None, LIST),
            "`next` is null, but page 2 of 2 results is not the last",
        ),
        (page_answer("page=2&page_size=2", 4, 2, None, None), "`previous` must be null exactly on page 1"),
        (page_answer("", 5, 2, 2), "`next` is not a URL string: 2"),
        (page_answer("", 5, 2, "?page=2"), "`next` is not an absolute URL"),
        (page_answer("", 5, 2, "http://127.0.0.1:9/shop/api/v1/customers/?page=2"), "`next` leaves the list"),
        (page_answer("", 5, 2, f"{LIST}?page=3"), "`next` should lead to page 2"),
        (page_answer("page_size=2", 5, 2, f"{LIST}?page=2"), "`next` does not keep page_size=2"),
        (page_answer("page=2&page_size=2", 3, 1, None, f"{LIST}?page_size=5"), "`previous` does not keep page_size=2"),
    ],
)
def test_pagination_page_names_each_rule_a_page_breaks(answer: Any, broken: str) -> None:
    with pytest.raises(AssertionError, match=broken.replace("?", r"\?")):
        checks.pagination_page(None, answer, list_case())


@pytest.mark.parametrize(
    "answer",
    [
        page_answer("", 2, 2),  # the only page
        page_answer("page_size=2", 5, 2, f"{LIST}?page=2&page_size=2"),
        page_answer("page=3&page_size=2", 5, 1, None, f"{LIST}?page=2&page_size=2"),  # the last page, shorter
        page_answer("page=2&page_size=500", 150, 50, None, f"{LIST}?page_size=100"),  # clamped to 100, then the rest
    ],
)
def test_pagination_page_passes_a_list_paged_by_the_rules(answer: Any) -> None:
    assert checks.pagination_page(None, answer, list_case()) is None


@pytest.mark.parametrize("query", ["page=0", "page=x", "page=1&page=2", "page_size=-1", "page_size="])
def test_a_page_asked_for_with_a_value_out_of_the_rules_is_not_judged(query: str) -> None:
    """Its answer is an error, not a page: the schema checks judge it."""
    answer = page_answer(query, 5, 9, "not a link")
    assert checks.pagination_page(None, answer, list_case()) is True
    assert checks.exact_page_size(None, answer, list_case(100)) is True


def test_exact_page_size_takes_only_the_size_asked_for_or_the_documented_maximum() -> None:
    """Strict: a page that is not the last holds page_size items, or the spec's `x-clamped-maximum`."""
    asked, clamped = page_answer("page_size=500", 150, 100, f"{LIST}?page=2&page_size=100"), list_case(100)
    assert checks.exact_page_size(None, asked, clamped) is None
    with pytest.raises(AssertionError, match="page_size=500 was asked for, a non-last page holds 100"):
        checks.exact_page_size(None, asked, list_case())  # no documented maximum: no clamping passes
    with pytest.raises(AssertionError, match="page_size=500 was asked for, a non-last page holds 50"):
        checks.exact_page_size(None, page_answer("page_size=500", 150, 50, f"{LIST}?page=2&page_size=50"), clamped)
    with pytest.raises(AssertionError, match="page_size=500 was asked for"):
        checks.exact_page_size(None, asked, list_case("100"))  # a clamp that is not a number documents none
    last = page_answer("page=2&page_size=500", 150, 50, None, f"{LIST}?page_size=100")
    assert checks.exact_page_size(None, last, clamped) is True  # the last page may hold fewer
    assert checks.exact_page_size(None, page_answer("", 150, 20, f"{LIST}?page=2"), clamped) is True  # none asked


def written(body: Any, negative: bool) -> Any:
    """A PATCH sending `body`, generated to break the schema in its body when `negative`."""
    components = {ParameterLocation.BODY: SimpleNamespace(mode=SimpleNamespace(value="negative"))} if negative else {}
    return SimpleNamespace(
        method="PATCH", body=body, media_type="application/json", meta=SimpleNamespace(components=components)
    )


def test_write_echo_judges_what_a_valid_write_stored_and_leaves_a_body_made_to_break_the_schema() -> None:
    """A body generated to break the schema that was accepted anyway is the schema checks' to judge: what
    came back may differ from it (a field cut to its maximum length)."""
    answer = json_answer({"phone": "42"}, "http://127.0.0.1:9/customers/v1/customers/103/")
    assert checks.write_echo(None, answer, written({"phone": "42"}, negative=False)) is None
    with pytest.raises(AssertionError, match="`phone` was sent as '4242' but stored as '42'"):
        checks.write_echo(None, answer, written({"phone": "4242"}, negative=False))
    assert checks.write_echo(None, answer, written({"phone": "4242"}, negative=True)) is True
