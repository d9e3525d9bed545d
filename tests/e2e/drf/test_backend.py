"""The DRF test backend over real HTTP: the correct configuration follows the spec's decisions, and each
variant has its one defect and no other (the probes below fire on exactly the variant named after them).
"""

from __future__ import annotations

import itertools
import time
import unicodedata
from collections.abc import Callable, Iterator
from urllib.parse import parse_qs, quote, urlsplit

import httpx
import pytest

from mock_server.api.security import DEV_CLIENT_ID, DEV_CLIENT_SECRET, REALM_PATH, TOKEN_PATH
from mock_server.app import create_app
from mock_server.settings import Settings
from tests.support.drf import API_KEY, VARIANTS
from tests.support.drf.server import serve
from tests.support.live import running
from tests.support.ports import free_port

pytestmark = pytest.mark.drf  # the DRF backend under a real server (tox -e drf)

BACKEND = "/shop/api/v1"
GATEWAY = "/customers/v1"
EXTRA_PRODUCTS = 30  # 105 products: more than the maximum page size
CUSTOMER = {
    "customername": "Probe Models",
    "contactlastname": "Probe",
    "contactfirstname": "Pat",
    "phone": "555-0100",
    "addressline1": "1 Probe Street",
    "city": "Probeville",
    "country": "Probeland",
}
# Seeded items with dependants: a product with order details, a customer with orders and payments.
WITH_DEPENDANTS = ("/products/S10_1678/", "/customers/103/")
serial = itertools.count(1)


def fresh(prefix: str) -> str:
    """An identifier no other test uses (well within every string bound)."""
    return f"{prefix}{next(serial)}"


@pytest.fixture(scope="module")
def realm() -> Iterator[str]:
    """The mock's identity realm, served for real: its URL is the issuer the backend trusts."""
    port = free_port()
    with running(create_app(Settings(port=port)), port=port) as origin:
        yield f"{origin}{REALM_PATH}"


@pytest.fixture(scope="module")
def token(realm: str) -> str:
    origin = realm.removesuffix(REALM_PATH)
    form = {"grant_type": "client_credentials", "client_id": DEV_CLIENT_ID, "client_secret": DEV_CLIENT_SECRET}
    response = httpx.post(f"{origin}{TOKEN_PATH}", data=form)
    assert response.status_code == 200, response.text
    access_token: str = response.json()["access_token"]
    return access_token


@pytest.fixture(scope="module")
def origin(realm: str) -> Iterator[str]:
    started = time.monotonic()
    with serve(realm_url=realm, extra_products=EXTRA_PRODUCTS) as served:
        print(f"DRF backend answering after {time.monotonic() - started:.2f} s")
        yield served


@pytest.fixture(scope="module")
def api(origin: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=f"{origin}{BACKEND}", headers={"X-API-Key": API_KEY}, timeout=10) as client:
        yield client


# Probes: each answers "does this backend have the defect?" with its own fresh items.


def deletes_with_dependants_fail(api: httpx.Client) -> bool:
    line = fresh("probe-line-")
    assert api.post("/productlines/", json={"productline": line}).status_code == 201
    assert api.post("/products/", json=product_body(fresh("PRB"), line)).status_code == 201
    owners = (f"/productlines/{line}/", *WITH_DEPENDANTS)
    statuses = [api.delete(path).status_code for path in owners]
    assert all(api.get(path).status_code == 200 for path in owners), "a failed delete deleted something"
    return any(status >= 500 for status in statuses)


def dotted_identifiers_unreachable(api: httpx.Client) -> bool:
    line = fresh("probe.line.")
    assert api.post("/productlines/", json={"productline": line}).status_code == 201
    return api.get(f"/productlines/{line}/").status_code == 404


def rename_copies(api: httpx.Client) -> bool:
    old, new = fresh("probe-old-"), fresh("probe-new-")
    assert api.post("/productlines/", json={"productline": old}).status_code == 201
    api.put(f"/productlines/{old}/", json={"productline": new})
    return api.get(f"/productlines/{old}/").status_code == 200 and api.get(f"/productlines/{new}/").status_code == 200


def patch_resets_other_fields(api: httpx.Client) -> bool:
    line = fresh("probe-patch-")
    created = api.post("/productlines/", json={"productline": line, "htmldescription": "<p>kept</p>"}).json()
    api.patch(f"/productlines/{line}/", json={"textdescription": "patched"})
    code = fresh("PPT")
    assert api.post("/products/", json={**product_body(code, "Planes"), "productscale": "1:72"}).status_code == 201
    api.patch(f"/products/{code}/", json={"productname": "patched"})
    number = 900_000 + next(serial)
    customer = {**CUSTOMER, "customernumber": number, "addressline2": "Suite 9"}
    assert api.post("/customers/", json=customer).status_code == 201
    api.patch(f"/customers/{number}/", json={"city": "Patched"})
    return (
        api.get(f"/productlines/{line}/").json()["htmldescription"] != created["htmldescription"]
        or api.get(f"/products/{code}/").json()["productscale"] != "1:72"
        or api.get(f"/customers/{number}/").json()["addressline2"] != "Suite 9"
    )


def previous_is_wrong(api: httpx.Client) -> bool:
    previous = api.get("/products/", params={"page": 3, "page_size": 10}).json()["previous"]
    return parse_qs(urlsplit(previous).query).get("page") != ["2"]


PROBES: dict[str, Callable[[httpx.Client], bool]] = {
    "unprotected_fk": deletes_with_dependants_fail,
    "default_lookup": dotted_identifiers_unreachable,
    "writable_pk": rename_copies,
    "patch_resets": patch_resets_other_fields,
    "wrong_previous": previous_is_wrong,
}


def product_body(code: str, line: str) -> dict[str, object]:
    return {
        "productcode": code,
        "productname": "Probe model",
        "productscale": "1:18",
        "productvendor": "Probe Vendor",
        "productdescription": "A product made by a test.",
        "quantityinstock": 3,
        "buyprice": "10.00",
        "msrp": "20.00",
        "productline": line,
    }


def test_every_variant_has_a_probe() -> None:
    assert set(PROBES) == set(VARIANTS)


def test_the_correct_backend_has_none_of_the_defects(api: httpx.Client) -> None:
    assert {name for name, probe in PROBES.items() if probe(api)} == set()


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_variant_has_its_defect_and_no_other(realm: str, variant: str) -> None:
    with (
        serve(variant, realm_url=realm) as served,
        httpx.Client(base_url=f"{served}{BACKEND}", headers={"X-API-Key": API_KEY}, timeout=10) as client,
    ):
        assert {name for name, probe in PROBES.items() if probe(client)} == {variant}


def test_the_case_insensitive_backend_ignores_letter_case_for_all_of_unicode(realm: str, api: httpx.Client) -> None:
    """`case_insensitive` finds an item under its identifier in any letter case, non-ASCII letters included,
    and answers its stored spelling; a case variant is a duplicate, also as a reference; lists are in
    case-folded order; Unicode normalisation still counts. The correct backend keeps cases apart."""
    serial_number = next(serial)
    line, lines = f"Éa-ci-{serial_number}", [f"Éc-ci-{serial_number}", f"éb-ci-{serial_number}"]
    assert api.post("/productlines/", json={"productline": line}).status_code == 201
    assert api.get(f"/productlines/{quote(line.swapcase())}/").status_code == 404
    with (
        serve("case_insensitive", realm_url=realm) as served,
        httpx.Client(base_url=f"{served}{BACKEND}", headers={"X-API-Key": API_KEY}, timeout=10) as client,
    ):
        assert client.post("/productlines/", json={"productline": line}).status_code == 201
        read = client.get(f"/productlines/{quote(line.swapcase())}/")
        assert (read.status_code, read.json()["productline"]) == (200, line)
        assert client.post("/productlines/", json={"productline": line.swapcase()}).status_code == 400
        product = client.post("/products/", json=product_body(fresh("CI"), line.upper()))
        assert (product.status_code, product.json()["productline"]) == (201, line)
        assert client.get(f"/productlines/{quote(unicodedata.normalize('NFD', line))}/").status_code == 404
        for name in lines:
            assert client.post("/productlines/", json={"productline": name}).status_code == 201
        names = [
            item["productline"] for item in client.get("/productlines/", params={"page_size": 100}).json()["results"]
        ]
        assert names == sorted(names, key=str.casefold) != sorted(names)


def test_unknown_variant_is_refused(realm: str) -> None:
    with pytest.raises(ValueError, match="unknown variant"), serve("no_such_defect", realm_url=realm):
        pass


# The correct backend, operation by operation.


def test_list_envelope_and_absolute_links(api: httpx.Client, origin: str) -> None:
    first = api.get("/productlines/", params={"page_size": 3}).json()
    assert first["count"] == len(api.get("/productlines/", params={"page_size": 100}).json()["results"]) >= 8
    assert len(first["results"]) == 3
    assert first["previous"] is None
    assert first["next"] == f"{origin}{BACKEND}/productlines/?page=2&page_size=3"
    second = httpx.get(first["next"], headers={"X-API-Key": API_KEY}).json()
    assert second["previous"] == f"{origin}{BACKEND}/productlines/?page_size=3"
    names = [item["productline"] for item in first["results"] + second["results"]]
    assert names == sorted(names)


def test_page_past_the_end_is_404_and_page_size_is_clamped(api: httpx.Client) -> None:
    assert api.get("/productlines/", params={"page": 2}).status_code == 404
    clamped = api.get("/products/", params={"page_size": 1000}).json()
    assert clamped["count"] >= 75 + EXTRA_PRODUCTS
    assert len(clamped["results"]) == 100
    assert "page_size=1000" in clamped["next"]


def test_nested_lists_are_paginated(api: httpx.Client) -> None:
    for path in (
        "/productlines/Classic%20Cars/products/",
        "/products/S10_1678/order-details/",
        "/customers/103/orders/",
        "/customers/103/payments/",
    ):
        page = api.get(path, params={"page_size": 1}).json()
        assert set(page) == {"count", "next", "previous", "results"}, path
        assert page["count"] >= 1 and len(page["results"]) == 1, path
    assert api.get("/productlines/No%20Such%20Line/products/").status_code == 404


def test_product_line_lifecycle(api: httpx.Client) -> None:
    line = fresh("Lifecycle ")
    path = f"/productlines/{quote(line)}/"
    body = {"productline": line, "textdescription": "text", "htmldescription": "<p>html</p>", "image": "aGVsbG8="}
    created = api.post("/productlines/", json=body)
    assert created.status_code == 201, created.text
    assert created.json() == {**body, "image": None}
    assert api.get(path).json() == created.json()
    replaced = api.put(path, json={"productline": line, "textdescription": "replaced"})
    assert replaced.json() == {
        "productline": line,
        "textdescription": "replaced",
        "htmldescription": None,
        "image": None,
    }
    patched = api.patch(path, data={"htmldescription": "<p>form</p>"})
    assert patched.json()["textdescription"] == "replaced"
    assert patched.json()["htmldescription"] == "<p>form</p>"
    assert api.patch(path, files={"textdescription": (None, "")}).json()["textdescription"] is None
    assert api.put(path, json={"productline": fresh("Other ")}).status_code == 409
    assert api.get(path).json()["htmldescription"] == "<p>form</p>"
    assert api.delete(path).status_code == 204
    assert api.get(path).status_code == 404


def test_delete_with_dependants_is_409_and_deletes_nothing(api: httpx.Client) -> None:
    for path in ("/productlines/Classic%20Cars/", *WITH_DEPENDANTS):
        response = api.delete(path)
        assert response.status_code == 409, (path, response.text)
        assert api.get(path).status_code == 200


def test_identifiers_with_a_slash_are_refused_naming_the_field(api: httpx.Client) -> None:
    before = api.get("/productlines/").json()["count"]
    response = api.post("/productlines/", json={"productline": "a/b"})
    assert response.status_code == 400
    assert "productline" in response.json()
    assert api.get("/productlines/").json()["count"] == before


def test_identifiers_with_dots_are_addressable(api: httpx.Client) -> None:
    code = fresh("S.")
    assert api.post("/products/", json=product_body(code, "Planes")).status_code == 201
    assert api.patch(f"/products/{code}/", json={"msrp": 30.5}).json()["msrp"] == "30.50"
    assert api.delete(f"/products/{code}/").status_code == 204


def test_unknown_sales_representative_is_400(api: httpx.Client) -> None:
    response = api.post("/customers/", json={**CUSTOMER, "customernumber": 990_001, "salesrepemployeenumber": 9999})
    assert response.status_code == 400
    assert "salesrepemployeenumber" in response.json()


def test_other_media_types_are_415(api: httpx.Client) -> None:
    response = api.post("/productlines/", content=b"productline=x", headers={"Content-Type": "text/plain"})
    assert response.status_code == 415


def test_credentials(origin: str, token: str) -> None:
    bearer = {"Authorization": f"Bearer {token}"}
    assert httpx.get(f"{origin}{BACKEND}/products/", headers=bearer).status_code == 200
    assert httpx.get(f"{origin}{GATEWAY}/customers/", headers=bearer).status_code == 200
    for mount, headers in (
        (BACKEND, {}),
        (BACKEND, {"X-API-Key": "wrong"}),
        (BACKEND, {"Authorization": f"Bearer {token[:-4]}AAAA"}),
        (GATEWAY, {"X-API-Key": API_KEY}),
    ):
        response = httpx.get(f"{origin}{mount}/customers/", headers=headers)
        assert response.status_code == 401, (mount, headers)
        assert response.headers["WWW-Authenticate"]


def test_the_gateway_serves_only_the_customers_operations(origin: str, token: str) -> None:
    bearer = {"Authorization": f"Bearer {token}"}
    page = httpx.get(f"{origin}{GATEWAY}/customers/", params={"page_size": 5}, headers=bearer).json()
    assert page["next"].startswith(f"{origin}{GATEWAY}/customers/")
    assert httpx.get(f"{origin}{GATEWAY}/customers/103/orders/", headers=bearer).status_code == 200
    assert httpx.get(f"{origin}{GATEWAY}/products/", headers=bearer).status_code == 404
