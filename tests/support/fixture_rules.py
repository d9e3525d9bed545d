"""Consistency rules shared by the fixture and generator tests.

Both the committed seed data (``fixtures/``) and the benchmark generator's
output must satisfy the same invariants, so they are checked in one place.
"""

from __future__ import annotations

import base64
import json
import re
from collections import Counter
from datetime import date
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]

Record = dict[str, Any]
Dataset = dict[str, list[Record]]

COLLECTIONS = ("productlines", "products", "customers", "orders", "orderdetails", "payments")
DECIMAL = re.compile(r"^-?\d{1,8}(?:\.\d{1,2})?$")
MONEY = re.compile(r"^-?\d{1,8}\.\d{2}$")
STATUSES = {"Shipped", "Resolved", "Cancelled", "On Hold", "Disputed", "In Process"}

FIELDS: dict[str, set[str]] = {
    "productlines": {"productline", "textdescription", "htmldescription", "image"},
    "products": {
        "productcode",
        "productname",
        "productscale",
        "productvendor",
        "productdescription",
        "quantityinstock",
        "buyprice",
        "msrp",
        "productline",
    },
    "customers": {
        "customernumber",
        "customername",
        "contactlastname",
        "contactfirstname",
        "phone",
        "addressline1",
        "addressline2",
        "city",
        "state",
        "postalcode",
        "country",
        "salesrepemployeenumber",
        "creditlimit",
    },
    "orders": {
        "ordernumber",
        "orderdate",
        "requireddate",
        "shippeddate",
        "status",
        "comments",
        "customernumber",
    },
    "orderdetails": {
        "id",
        "quantityordered",
        "priceeach",
        "orderlinenumber",
        "ordernumber",
        "productcode",
    },
    "payments": {"id", "checknumber", "paymentdate", "amount", "customernumber"},
}
KEYS = {
    "productlines": "productline",
    "products": "productcode",
    "customers": "customernumber",
    "orders": "ordernumber",
    "orderdetails": "id",
    "payments": "id",
}
# field -> (min length, max length, nullable)
STRINGS: dict[str, dict[str, tuple[int, int, bool]]] = {
    "productlines": {"productline": (1, 50, False), "textdescription": (0, 4000, True)},
    "products": {
        "productcode": (1, 15, False),
        "productname": (1, 70, False),
        "productscale": (1, 10, False),
        "productvendor": (1, 50, False),
        "productdescription": (1, 100_000, False),
    },
    "customers": {
        **{
            name: (1, 50, False)
            for name in (
                "customername",
                "contactlastname",
                "contactfirstname",
                "phone",
                "addressline1",
                "city",
                "country",
            )
        },
        "addressline2": (0, 50, True),
        "state": (0, 50, True),
        "postalcode": (0, 15, True),
    },
    "orders": {"status": (1, 15, False)},
    "payments": {"checknumber": (1, 50, False)},
}


def load_dataset(directory: Path) -> Dataset:
    """Read the six collection files of a data set directory."""
    return {name: json.loads((directory / f"{name}.json").read_text(encoding="utf-8")) for name in COLLECTIONS}


def keys_of(data: Dataset, collection: str) -> set[Any]:
    return {record[KEYS[collection]] for record in data[collection]}


def empty_productlines(data: Dataset) -> set[str]:
    return keys_of(data, "productlines") - {p["productline"] for p in data["products"]}


def customers_without_orders(data: Dataset) -> set[int]:
    return keys_of(data, "customers") - {o["customernumber"] for o in data["orders"]}


def products_without_details(data: Dataset) -> set[str]:
    return keys_of(data, "products") - {d["productcode"] for d in data["orderdetails"]}


def _check_shape(data: Dataset) -> None:
    for name in COLLECTIONS:
        key = KEYS[name]
        for record in data[name]:
            assert set(record) == FIELDS[name], (name, record)
        ids = [record[key] for record in data[name]]
        assert len(ids) == len(set(ids)), f"duplicate {key} in {name}"
        assert ids == sorted(ids), f"{name} not sorted by {key}"


def _check_strings(data: Dataset) -> None:
    for name, rules in STRINGS.items():
        for record in data[name]:
            for field, (low, high, nullable) in rules.items():
                value = record[field]
                if value is None:
                    assert nullable, (name, field, record)
                    continue
                assert isinstance(value, str) and low <= len(value) <= high, (name, field, record)


def _check_decimals(data: Dataset) -> None:
    fields = {
        "products": ("buyprice", "msrp"),
        "customers": ("creditlimit",),
        "orderdetails": ("priceeach",),
        "payments": ("amount",),
    }
    for name, names in fields.items():
        for record in data[name]:
            for field in names:
                value = record[field]
                if value is None and field == "creditlimit":
                    continue
                assert isinstance(value, str) and DECIMAL.match(value), (name, field, value)
                assert MONEY.match(value), (name, field, value)


def _check_productlines(data: Dataset) -> None:
    for line in data["productlines"]:
        assert line["htmldescription"] is None or isinstance(line["htmldescription"], str)
        if line["image"] is not None:
            base64.b64decode(line["image"], validate=True)


def _check_products(data: Dataset) -> None:
    lines = keys_of(data, "productlines")
    for product in data["products"]:
        assert product["productline"] in lines, product
        assert isinstance(product["quantityinstock"], int)
        assert -32768 <= product["quantityinstock"] <= 32767, product


def _check_customers(data: Dataset) -> None:
    for customer in data["customers"]:
        assert isinstance(customer["customernumber"], int)
        rep = customer["salesrepemployeenumber"]
        assert rep is None or isinstance(rep, int), customer


def _check_orders(data: Dataset) -> None:
    customers = keys_of(data, "customers")
    for order in data["orders"]:
        assert order["customernumber"] in customers, order
        assert order["status"] in STATUSES, order
        ordered = date.fromisoformat(order["orderdate"])
        assert date.fromisoformat(order["requireddate"]) > ordered, order
        if order["shippeddate"] is not None:
            assert date.fromisoformat(order["shippeddate"]) >= ordered, order
        assert order["comments"] is None or isinstance(order["comments"], str)


def _check_orderdetails(data: Dataset) -> None:
    orders = keys_of(data, "orders")
    products = keys_of(data, "products")
    lines: Counter[tuple[int, int]] = Counter()
    codes: Counter[tuple[int, str]] = Counter()
    per_order: Counter[int] = Counter()
    for detail in data["orderdetails"]:
        assert detail["ordernumber"] in orders, detail
        assert detail["productcode"] in products, detail
        assert isinstance(detail["quantityordered"], int) and detail["quantityordered"] > 0
        assert isinstance(detail["orderlinenumber"], int) and detail["orderlinenumber"] >= 1
        lines[detail["ordernumber"], detail["orderlinenumber"]] += 1
        codes[detail["ordernumber"], detail["productcode"]] += 1
        per_order[detail["ordernumber"]] += 1
    assert max(lines.values()) == 1, "orderlinenumber repeated within an order"
    assert max(codes.values()) == 1, "productcode repeated within an order"
    assert set(per_order) == orders, "every order needs at least one detail"
    assert max(per_order.values()) <= 8


def _check_payments(data: Dataset) -> None:
    buyers = {o["customernumber"] for o in data["orders"]}
    for payment in data["payments"]:
        assert payment["customernumber"] in buyers, payment
        date.fromisoformat(payment["paymentdate"])
    checks = [p["checknumber"] for p in data["payments"]]
    assert len(checks) == len(set(checks)), "duplicate checknumber"


def check_consistency(data: Dataset) -> None:
    """Assert every invariant that any shop data set must satisfy."""
    _check_shape(data)
    _check_strings(data)
    _check_decimals(data)
    _check_productlines(data)
    _check_products(data)
    _check_customers(data)
    _check_orders(data)
    _check_orderdetails(data)
    _check_payments(data)
