"""The committed seed data in fixtures/ is complete and internally consistent."""

from __future__ import annotations

from collections import Counter

import pytest

from tests.support.fixture_rules import (
    REPO_ROOT,
    Dataset,
    check_consistency,
    customers_without_orders,
    empty_productlines,
    load_dataset,
    products_without_details,
)


@pytest.fixture(scope="module")
def data() -> Dataset:
    return load_dataset(REPO_ROOT / "fixtures")


def test_fixtures_are_consistent(data: Dataset) -> None:
    check_consistency(data)


@pytest.mark.parametrize(
    ("collection", "minimum"),
    [
        ("productlines", 7),
        ("products", 60),
        ("customers", 30),
        ("orders", 100),
        ("payments", 80),
    ],
)
def test_minimum_counts(data: Dataset, collection: str, minimum: int) -> None:
    assert len(data[collection]) >= minimum


def test_exactly_one_product_line_is_empty_and_others_have_three(data: Dataset) -> None:
    assert len(empty_productlines(data)) == 1
    per_line = Counter(p["productline"] for p in data["products"])
    assert min(per_line.values()) >= 3


def test_deletable_customers_and_products_exist(data: Dataset) -> None:
    idle = customers_without_orders(data)
    assert len(idle) >= 4
    assert not idle & {p["customernumber"] for p in data["payments"]}
    assert len(products_without_details(data)) >= 5


@pytest.mark.parametrize(
    ("collection", "field"),
    [
        ("customers", "state"),
        ("customers", "addressline2"),
        ("customers", "postalcode"),
        ("customers", "creditlimit"),
        ("customers", "salesrepemployeenumber"),
        ("orders", "shippeddate"),
        ("orders", "comments"),
        ("productlines", "textdescription"),
        ("productlines", "htmldescription"),
        ("productlines", "image"),
    ],
)
def test_nullable_fields_have_both_nulls_and_values(data: Dataset, collection: str, field: str) -> None:
    values = [record[field] for record in data[collection]]
    assert None in values
    assert any(value is not None for value in values)


def test_unshipped_orders_have_no_shipped_date(data: Dataset) -> None:
    for order in data["orders"]:
        if order["status"] in {"In Process", "On Hold"}:
            assert order["shippeddate"] is None, order


def test_detail_ids_are_one_to_n(data: Dataset) -> None:
    for collection in ("orderdetails", "payments"):
        ids = [record["id"] for record in data[collection]]
        assert ids == list(range(1, len(ids) + 1))
