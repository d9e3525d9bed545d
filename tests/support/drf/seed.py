"""Tables and data: the schema from the models (no migrations), rows from the project's fixtures."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from django.core.management import call_command
from django.db import models, transaction

from tests.support.drf.models import Customer, Employee, Order, OrderDetail, Payment, Product, ProductLine

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"
# Parents before children, as the foreign keys require.
COLLECTIONS: tuple[tuple[str, type[models.Model]], ...] = (
    ("productlines", ProductLine),
    ("products", Product),
    ("customers", Customer),
    ("orders", Order),
    ("orderdetails", OrderDetail),
    ("payments", Payment),
)


def rows(model: type[models.Model], records: Iterable[dict[str, Any]]) -> list[models.Model]:
    """Model instances from records in the shape GET returns (a foreign key by its referenced value)."""
    return [
        model(**{model._meta.get_field(name).attname: value for name, value in record.items()}) for record in records
    ]


def seed(extra_products: int = 0) -> None:
    """Create the tables and load the fixtures, plus `extra_products` products in the first product line."""
    call_command("migrate", run_syncdb=True, verbosity=0)
    records = {name: json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8")) for name, _ in COLLECTIONS}
    employees = sorted({c["salesrepemployeenumber"] for c in records["customers"]} - {None})
    with transaction.atomic():
        Employee.objects.bulk_create(Employee(employeenumber=number) for number in employees)
        for name, model in COLLECTIONS:
            model.objects.bulk_create(rows(model, records[name]))
        line = records["productlines"][0]["productline"]
        Product.objects.bulk_create(extra(line, extra_products))


def extra(productline: str, count: int) -> Iterable[Product]:
    for number in range(count):
        yield Product(
            productcode=f"X{number:06d}",
            productname=f"Extra model {number}",
            productscale="1:18",
            productvendor="Extra Vendor",
            productdescription="A product added to make long lists.",
            quantityinstock=number % 1000,
            buyprice="10.00",
            msrp="20.00",
            productline_id=productline,
        )
