"""Every item the mock accepts is addressable: identifiers holding URL-special characters are created,
then read, replaced, patched (JSON and form), listed and deleted through their percent-encoded path,
with the fast path and through Connexion alone, over real HTTP."""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import quote

import httpx
import pytest

from mock_server.app import create_app
from mock_server.settings import Settings
from tests.conftest import API_KEY_HEADERS, BACKEND
from tests.mock_server.api.test_operations import PRODUCT
from tests.support.live import running

IDENTIFIERS = [
    "Slash/Line",
    "a/b/c",
    "/lead",
    "trail/",
    ".",
    "..",
    "trail.",
    "100%",
    "%2F",
    "%zz",
    "what?",
    "a#b",
    "a+b",
    "a&b=c",
    "a;b",
    "with space",
    " lead",
    "trail ",
    "back\\slash",
    'quote"s',
    "<tag>",
    "Ünïcödé",
    "🚗 car",
    "tab\tx",
    "line\nbreak",
    "\n",
    "trail\n",
    "\nlead",
    "cr\r\nlf",
]
FORM = {"Content-Type": "application/x-www-form-urlencoded"}


def segment(identifier: str) -> str:
    """`identifier` as one path segment, as a careful client encodes it (dots too, so that no
    client or proxy takes `.` or `..` for a dot segment)."""
    return quote(identifier, safe="").replace(".", "%2E")


@pytest.fixture(scope="module", params=["fast-path", "connexion"])
def http(request: pytest.FixtureRequest) -> Iterator[httpx.Client]:
    app = create_app(Settings(fast_path=request.param == "fast-path"))
    with running(app) as origin, httpx.Client(base_url=origin, headers=API_KEY_HEADERS, timeout=30) as client:
        yield client


def listed(client: httpx.Client, path: str, field: str) -> list[str]:
    found: list[str] = []
    url: str | None = f"{BACKEND}{path}?page_size=100"
    while url:
        page = client.get(url)
        assert page.status_code == 200, page.text
        found += [item[field] for item in page.json()["results"]]
        url = page.json()["next"]
    return found


def round_trip(client: httpx.Client, collection: str, field: str, body: dict[str, str | int], text_field: str) -> None:
    identifier = str(body[field])
    item = f"{BACKEND}/{collection}/{segment(identifier)}/"
    created = client.post(f"{BACKEND}/{collection}/", json=body)
    assert created.status_code == 201, created.text
    assert created.json()[field] == identifier
    assert client.get(item).json() == created.json()
    assert identifier in listed(client, f"/{collection}/", field)

    replaced = client.put(item, json={**body, text_field: "replaced"})
    assert replaced.status_code == 200 and replaced.json()[text_field] == "replaced", replaced.text
    patched = client.patch(item, json={text_field: "patched"})
    assert patched.status_code == 200 and patched.json()[text_field] == "patched", patched.text
    by_form = client.patch(item, content=f"{text_field}=by+form".encode(), headers=FORM)
    assert by_form.status_code == 200 and by_form.json()[text_field] == "by form", by_form.text
    assert client.get(item).json()[text_field] == "by form"

    assert client.delete(item).status_code == 204
    assert client.get(item).status_code == 404
    assert identifier not in listed(client, f"/{collection}/", field)


@pytest.mark.parametrize("identifier", IDENTIFIERS)
def test_a_product_line_with_any_identifier_is_addressable(http: httpx.Client, identifier: str) -> None:
    round_trip(http, "productlines", "productline", {"productline": identifier}, "textdescription")
    # its sub-list is addressable too, and names the line's products
    http.post(f"{BACKEND}/productlines/", json={"productline": identifier})
    product = {**PRODUCT, "productcode": "ADDR_1", "productline": identifier}
    assert http.post(f"{BACKEND}/products/", json=product).status_code == 201
    products = http.get(f"{BACKEND}/productlines/{segment(identifier)}/products/")
    assert products.status_code == 200 and [p["productcode"] for p in products.json()["results"]] == ["ADDR_1"]
    assert http.delete(f"{BACKEND}/productlines/{segment(identifier)}/").status_code == 409  # it has a product
    assert http.delete(f"{BACKEND}/products/ADDR_1/").status_code == 204
    assert http.delete(f"{BACKEND}/productlines/{segment(identifier)}/").status_code == 204


@pytest.mark.parametrize("identifier", [identifier[:15] for identifier in IDENTIFIERS])
def test_a_product_with_any_identifier_is_addressable(http: httpx.Client, identifier: str) -> None:
    round_trip(http, "products", "productcode", {**PRODUCT, "productcode": identifier}, "productname")
    http.post(f"{BACKEND}/products/", json={**PRODUCT, "productcode": identifier})
    details = http.get(f"{BACKEND}/products/{segment(identifier)}/order-details/")
    assert details.status_code == 200 and details.json()["count"] == 0
    assert http.delete(f"{BACKEND}/products/{segment(identifier)}/").status_code == 204


def test_an_unescaped_slash_still_separates_segments(http: httpx.Client) -> None:
    """Routing on the raw path changes nothing for a path without escapes."""
    assert http.post(f"{BACKEND}/productlines/", json={"productline": "Slash/Line"}).status_code == 201
    assert http.get(f"{BACKEND}/productlines/Slash/Line/").status_code == 404
    assert http.get(f"{BACKEND}/productlines/Slash%2fLine/").status_code == 200  # escapes are case-insensitive
    assert http.delete(f"{BACKEND}/productlines/Slash%2FLine/").status_code == 204


@pytest.mark.parametrize("identifier", ["\n", "trail\n", "line\nbreak", "%0A", "%250A"])
def test_a_refused_request_on_any_identifier_is_answered_for_that_identifier(
    http: httpx.Client, identifier: str
) -> None:
    """The answers Connexion gives (404, 400) name the identifier sent; a line feed was misrouted to a bare
    404, or a 307 to the path without its slash."""
    item = f"{BACKEND}/productlines/{segment(identifier)}/"
    missing = http.get(item)
    assert missing.status_code == 404 and repr(identifier) in missing.json()["detail"], missing.text
    assert http.post(f"{BACKEND}/productlines/", json={"productline": identifier}).status_code == 201
    for method in ("PUT", "PATCH"):
        refused = http.request(method, item, json={"productline": 5})
        assert refused.status_code == 400 and "productline" in refused.text, refused.text
    assert http.get(item).json()["productline"] == identifier
    assert http.delete(item).status_code == 204
