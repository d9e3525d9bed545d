"""Page numbers to slices, and the paginated envelope with absolute `next` / `previous` links.

Pure: the caller passes the URL the client called (already rebuilt for proxies) and gets a dict.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit


class PageNotFound(Exception):
    """`page` is past the last page (page 1 always exists, even when empty)."""


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
    """The envelope of one page: `results` are the items at `request.offset` (the caller reads only those)."""
    last_page = max(1, -(-count // request.size))
    if request.page > last_page:
        raise PageNotFound(f"Invalid page: {request.page} is past the last page ({last_page}).")
    return {
        "count": count,
        "next": _link(url, request, request.page + 1) if request.page < last_page else None,
        "previous": _link(url, request, request.page - 1) if request.page > 1 else None,
        "results": results,
    }


def _link(url: str, request: PageRequest, page: int) -> str:
    """`url` with `page` set (dropped for page 1, as DRF does) and the page size kept."""
    scheme, netloc, path, query, _ = urlsplit(url)
    params = [(k, v) for k, v in parse_qsl(query, keep_blank_values=True) if k not in {"page", "page_size"}]
    if page > 1:
        params.append(("page", str(page)))
    params.append(("page_size", str(request.size)))
    return urlunsplit((scheme, netloc, path, urlencode(params), ""))
