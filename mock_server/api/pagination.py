"""Page numbers to slices, and the paginated envelope with absolute `next` / `previous` links.

It is pure. The caller passes the URL the client called, already rebuilt for proxies, and gets a dict.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit


class PageNotFound(Exception):
    """`page` is past the last page. Page 1 always exists, even when empty."""


@dataclass(frozen=True)
class PageRequest:
    page: int
    size: int

    @property
    def offset(self) -> int:
        return (self.page - 1) * self.size


@dataclass(frozen=True)
class PageSizePolicy:
    """The spec's page_size default and the maximum it clamps to."""

    default: int
    maximum: int

    def request(self, page: int | None, page_size: int | None) -> PageRequest:
        size = self.default if page_size is None else min(page_size, self.maximum)
        return PageRequest(page=1 if page is None else page, size=size)


def paginate(request: PageRequest, count: int, results: list[dict[str, Any]], url: str) -> dict[str, Any]:
    """The envelope of one page. `results` are the items at `request.offset`, the only ones the caller reads."""
    last_page = max(1, -(-count // request.size))
    if request.page > last_page:
        raise PageNotFound(f"Invalid page: {request.page} is past the last page ({last_page}).")
    has_next, has_previous = request.page < last_page, request.page > 1
    link = _links(url, request.size) if has_next or has_previous else None
    return {
        "count": count,
        "next": link(request.page + 1) if link and has_next else None,
        "previous": link(request.page - 1) if link and has_previous else None,
        "results": results,
    }


def _links(url: str, size: int) -> Callable[[int], str]:
    """Links to pages of `url`, with `page` set and the page size and other query parameters kept.

    `page` is dropped for page 1, as DRF does. `url` is parsed once for both links of a page.
    """
    scheme, netloc, path, query, _ = urlsplit(url)
    kept = urlencode([(k, v) for k, v in parse_qsl(query, keep_blank_values=True) if k not in {"page", "page_size"}])
    base = urlunsplit((scheme, netloc, path, "", ""))
    start = f"{base}?{kept}&" if kept else f"{base}?"

    def link(page: int) -> str:
        return f"{start}page={page}&page_size={size}" if page > 1 else f"{start}page_size={size}"

    return link
