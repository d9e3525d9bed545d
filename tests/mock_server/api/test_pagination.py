"""Page arithmetic and links, without HTTP."""

from __future__ import annotations

from typing import Any

import pytest

from mock_server.api.pagination import PageNotFound, PageSizePolicy, paginate
from mock_server.api.routing import page_size_policy

ITEMS = [{"n": i} for i in range(45)]


def envelope(policy: PageSizePolicy, page: int | None, url: str) -> dict[str, Any]:
    request = policy.request(page, None)
    return paginate(request, len(ITEMS), ITEMS[request.offset : request.offset + request.size], url)


def test_the_policy_comes_from_the_spec() -> None:
    assert page_size_policy() == PageSizePolicy(default=20, maximum=100)


def test_pages_and_links() -> None:
    policy = PageSizePolicy(default=20, maximum=100)
    url = "http://h/x/?page=2&filter=a"
    first = envelope(policy, None, url)
    assert first["next"] == "http://h/x/?filter=a&page=2&page_size=20" and first["previous"] is None
    middle = envelope(policy, 2, url)
    assert middle["previous"] == "http://h/x/?filter=a&page_size=20"
    last = envelope(policy, 3, url)
    assert last["next"] is None and [i["n"] for i in last["results"]] == list(range(40, 45))
    with pytest.raises(PageNotFound):
        envelope(policy, 4, url)


def test_page_size_is_clamped_and_an_empty_list_has_a_first_page() -> None:
    policy = PageSizePolicy(default=20, maximum=10)
    assert policy.request(None, 500).size == 10
    assert paginate(policy.request(1, None), 0, [], "http://h/") == {
        "count": 0,
        "next": None,
        "previous": None,
        "results": [],
    }
