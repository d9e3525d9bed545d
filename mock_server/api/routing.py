"""The one explicit table of the handler of each operationId, a reader for a GET.

A test checks it against the spec.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mock_server.api.handlers import Collection, Reader, Writer, read_handler, write_handler
from mock_server.api.pagination import PageSizePolicy
from mock_server.spec.schemas import Schema, component_schema, load_spec
from mock_server.state.store import Store

Handler = Callable[..., Any]


def page_size_policy(spec: Schema | None = None) -> PageSizePolicy:
    """Read page_size's default and clamped maximum from the spec."""
    schema = (spec or load_spec())["components"]["parameters"]["page_size"]["schema"]
    return PageSizePolicy(default=schema["default"], maximum=schema["x-clamped-maximum"])


def operation_table(store: Store, spec: Schema | None = None) -> tuple[dict[str, Reader], dict[str, Writer]]:
    """The readers of the GET operations and the handlers of the others, each by operationId."""
    pages = page_size_policy(spec)
    productlines = Collection(store, "productlines", component_schema("ProductLine", spec), pages)
    products = Collection(store, "products", component_schema("Product", spec), pages)
    customers = Collection(store, "customers", component_schema("Customer", spec), pages)
    readers: dict[str, Reader] = {
        "list_product_lines": productlines.list,
        "get_product_line": productlines.get,
        "get_product_line_products": productlines.owned("products", "productline"),
        "list_products": products.list,
        "get_product": products.get,
        "get_product_order_details": products.owned("orderdetails", "productcode"),
        "list_customers": customers.list,
        "get_customer": customers.get,
        "get_customer_orders": customers.owned("orders", "customernumber"),
        "get_customer_payments": customers.owned("payments", "customernumber"),
    }
    writers: dict[str, Writer] = {
        "create_product_line": productlines.create,
        "update_product_line": productlines.update,
        "patch_product_line": productlines.patch,
        "delete_product_line": productlines.delete,
        "create_product": products.create,
        "update_product": products.update,
        "patch_product": products.patch,
        "delete_product": products.delete,
        "create_customer": customers.create,
        "update_customer": customers.update,
        "patch_customer": customers.patch,
        "delete_customer": customers.delete,
    }
    return readers, writers


def handler_table(readers: dict[str, Reader], writers: dict[str, Writer]) -> dict[str, Handler]:
    """The handler Connexion calls for each operationId."""
    return {
        **{name: read_handler(reader) for name, reader in readers.items()},
        **{name: write_handler(writer) for name, writer in writers.items()},
    }
