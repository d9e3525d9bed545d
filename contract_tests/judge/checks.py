"""Domain checks Schemathesis runs on every response it gets, registered with `@schemathesis.check`.

Each judges one response from what the request and the response say. None needs the spec beyond the
operation it came with. A check returns True when it does not apply, and Schemathesis then counts it as
skipped. It returns None when it passed, and raises a titled AssertionError when the rule is broken.

`exact_page_size` is strict. By default, DRF-like clamping of `page_size` to any maximum is allowed.
Strictly, only clamping to the maximum the spec documents is.
"""

from __future__ import annotations

import functools
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import schemathesis

from contract_tests.client.bodies import lenient_json, undecodable
from contract_tests.outcome.standalone import same_value
from contract_tests.schemathesis_seam import negative_at
from contract_tests.spec import FORM_MEDIA_TYPES

ENVELOPE_KEYS = frozenset({"count", "next", "previous", "results"})
WRITE_STATUSES = {"post": 201, "put": 200, "patch": 200}


def _json(response: Any) -> Any:
    """The answer's JSON, or None. It is parsed once for all the checks judging the answer (`_parsed`)."""
    return _parsed(response.content, _content_type(response))


@functools.lru_cache(maxsize=64)
def _parsed(content: bytes, content_type: str | None) -> Any:
    """A body's JSON, kept for the checks after the first. Schemathesis runs each check on the same answer,
    one after the other, and a list page was parsed three times. The checks only read it."""
    try:
        return lenient_json(content, content_type)
    except (ValueError, RecursionError):  # Not JSON, or nested too deep to parse, so not the JSON asked for.
        return None


def _content_type(response: Any) -> str | None:
    return next(iter(response.headers.get("content-type", [])), None)


@schemathesis.check
def response_decodable(ctx: Any, response: Any, case: Any) -> bool | None:
    """A body is text a client can read as its Content-Type says (`undecodable` in client/bodies.py)."""
    if not response.content:
        return True
    problem = undecodable(response.content, _content_type(response))
    if problem is not None:
        raise AssertionError(problem)
    return None


def _single_int(query: dict[str, list[str]], name: str) -> int | bool | None:
    """The query's integer value of `name`. None when absent, False when invalid or repeated."""
    values = query.get(name)
    if values is None:
        return None
    if len(values) != 1 or not values[0].isdecimal() or int(values[0]) < 1:
        return False
    return int(values[0])


def _envelope(response: Any, case: Any) -> tuple[dict[str, Any], int, int | None, str] | None:
    """The page, its number, the requested page size and the request's URL without query, if it is one."""
    if case.method.upper() != "GET" or response.status_code != 200:
        return None
    body = _json(response)
    if not isinstance(body, dict) or not body.keys() >= ENVELOPE_KEYS or not isinstance(body["results"], list):
        return None
    url = urlsplit(response.request.url)
    query = parse_qs(url.query, keep_blank_values=True)
    page, size = _single_int(query, "page"), _single_int(query, "page_size")
    if page is False or size is False or not isinstance(body["count"], int):
        return None
    return body, page or 1, size if isinstance(size, int) else None, url._replace(query="", fragment="").geturl()


def _check_link(link: Any, request_url: str, page: int, size: int | None, shown: int, which: str) -> None:
    """An absolute link to `page` of the same list, keeping the page size (or its clamped value)."""
    if not isinstance(link, str):
        raise AssertionError(f"`{which}` is not a URL string: {link!r}")
    parsed = urlsplit(link)
    if not parsed.scheme or not parsed.netloc:
        raise AssertionError(f"`{which}` is not an absolute URL: {link}")
    if unquote(parsed._replace(query="", fragment="").geturl()) != unquote(request_url):
        raise AssertionError(f"`{which}` leaves the list that was called ({request_url}): {link}")
    query = parse_qs(parsed.query)
    if page != 1 and query.get("page") != [str(page)]:
        raise AssertionError(f"`{which}` should lead to page {page}: {link}")
    if size is None:
        return
    kept = query.get("page_size", [""])[-1]
    floor = shown if which == "next" else 1
    if not kept.isdecimal() or not floor <= int(kept) <= size:
        raise AssertionError(f"`{which}` does not keep page_size={size}: {link}")


def _fits_last_page(count: int, page: int, shown: int, size: int | None) -> bool:
    """Whether some page size (at least `shown`, at most `size`) makes this the last page."""
    rest = count - shown
    full, remainder = divmod(rest, page - 1)
    return remainder == 0 and full >= max(shown, 1) and (size is None or full <= size)


@schemathesis.check
def pagination_page(ctx: Any, response: Any, case: Any) -> bool | None:
    """One page of a list keeps its size bound and count. Its next and previous links stay on the list and
    keep page_size."""
    envelope = _envelope(response, case)
    if envelope is None:
        return True
    body, page, size, request_url = envelope
    count, results = body["count"], body["results"]
    if size is not None and len(results) > size:
        raise AssertionError(f"page_size={size} but the page holds {len(results)} results")
    if count < 0 or len(results) > count:
        raise AssertionError(f"count={count} cannot hold the {len(results)} results of this page")
    before = (page - 1) * len(results)
    if body["next"] is None and page == 1 and len(results) != count:
        raise AssertionError(f"`next` is null on page 1, but count={count} and the page holds {len(results)}")
    if body["next"] is not None and before + len(results) >= count:
        raise AssertionError(f"`next` is set, but page {page} of {len(results)} results already reaches count={count}")
    if body["next"] is None and page > 1 and not _fits_last_page(count, page, len(results), size):
        raise AssertionError(
            f"`next` is null, but page {page} of {len(results)} results is not the last of count={count}"
        )
    if (body["previous"] is None) != (page == 1):
        raise AssertionError(
            f"`previous` must be null exactly on page 1; page {page} has previous={body['previous']!r}"
        )
    if body["next"] is not None:
        _check_link(body["next"], request_url, page + 1, size, len(results), "next")
    if body["previous"] is not None:
        _check_link(body["previous"], request_url, page - 1, size, len(results), "previous")
    return None


def _documented_clamp(case: Any) -> int | None:
    """The page size the spec itself clamps `page_size` to (`x-clamped-maximum`), if it documents one."""
    for parameter in case.operation.query:
        if parameter.name == "page_size":
            clamp = parameter.definition.get("schema", {}).get("x-clamped-maximum")
            return clamp if isinstance(clamp, int) else None
    return None


@schemathesis.check
def exact_page_size(ctx: Any, response: Any, case: Any) -> bool | None:
    """Strict. A page that is not the last holds exactly the page_size asked for, or the maximum the spec
    documents for it. No other, silent clamping passes."""
    envelope = _envelope(response, case)
    if envelope is None:
        return True
    body, _, size, _ = envelope
    if size is None or body["next"] is None:
        return True
    clamp = _documented_clamp(case)
    expected = min(size, clamp) if clamp is not None else size
    if len(body["results"]) != expected:
        raise AssertionError(f"page_size={size} was asked for, a non-last page holds {len(body['results'])}")
    return None


@schemathesis.check
def list_scoping(ctx: Any, response: Any, case: Any) -> bool | None:
    """Every item of a sub-list carries its owner's identifier (the path parameter of the same name)."""
    envelope = _envelope(response, case)
    if envelope is None or not case.path_parameters:
        return True
    for item in envelope[0]["results"]:
        for name, value in case.path_parameters.items():
            if isinstance(item, dict) and name in item and str(item[name]) != unquote(str(value)):
                raise AssertionError(f"an item with {name}={item[name]!r} is listed under {name}={value!r}")
    return None


@schemathesis.check
def item_identity(ctx: Any, response: Any, case: Any) -> bool | None:
    """An item read or written at its path carries that identifier, in its own spelling.

    The spelling may differ from the path's in letter case only where the service ignores case
    (`identifiers-exact`). `identifier_variants` judges that this is consistent."""
    body = _json(response) if 200 <= response.status_code < 300 else None
    if not isinstance(body, dict) or body.keys() >= ENVELOPE_KEYS or not case.path_parameters:
        return True
    for name, value in case.path_parameters.items():
        if name in body and str(body[name]).casefold() != unquote(str(value)).casefold():
            raise AssertionError(f"the item at {name}={value!r} answers {name}={body[name]!r}")
    return None


@schemathesis.check
def write_echo(ctx: Any, response: Any, case: Any) -> bool | None:
    """A successful create, replace or change answers what was sent (decimals by value)."""
    expected = WRITE_STATUSES.get(case.method.lower())
    if expected != response.status_code or not isinstance(case.body, dict):
        return True
    if negative_at(case, "body"):
        return True
    stored = _json(response)
    if not isinstance(stored, dict):
        raise AssertionError("a successful write answered no JSON object")
    form = case.media_type in FORM_MEDIA_TYPES
    for name, sent in case.body.items():
        if name in stored and not same_value(sent, stored[name], form=form):
            raise AssertionError(f"`{name}` was sent as {sent!r} but stored as {stored[name]!r}")
    return None
