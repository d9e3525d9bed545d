"""The one explicit table: operationId -> handler. A test checks it against the spec's operations."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mock_server.handlers import Collection
from mock_server.pagination import PageSizePolicy
from mock_server.schemas import component_schema, load_spec
from mock_server.store import Store

Handler = Callable[..., Any]


def page_size_policy() -> PageSizePolicy:
    """Read page_size's default and clamped maximum from the spec."""
    schema = load_spec()["components"]["parameters"]["page_size"]["schema"]
    return PageSizePolicy(default=schema["default"], maximum=schema["x-clamped-maximum"])


def handler_table(store: Store) -> dict[str, Handler]:
    pages = page_size_policy()
    productlines = Collection(store, "productlines", component_schema("ProductLine"), pages)
    products = Collection(store, "products", component_schema("Product"), pages)
    customers = Collection(store, "customers", component_schema("Customer"), pages)
    return {
        "list_product_lines": productlines.list,
        "create_product_line": productlines.create,
        "get_product_line": productlines.get,
        "update_product_line": productlines.update,
        "patch_product_line": productlines.patch,
        "delete_product_line": productlines.delete,
        "get_product_line_products": productlines.owned("products", "productline"),
        "list_products": products.list,
        "create_product": products.create,
        "get_product": products.get,
        "update_product": products.update,
        "patch_product": products.patch,
        "delete_product": products.delete,
        "get_product_order_details": products.owned("orderdetails", "productcode"),
        "list_customers": customers.list,
        "create_customer": customers.create,
        "get_customer": customers.get,
        "update_customer": customers.update,
        "patch_customer": customers.patch,
        "delete_customer": customers.delete,
        "get_customer_orders": customers.owned("orders", "customernumber"),
        "get_customer_payments": customers.owned("payments", "customernumber"),
    }
