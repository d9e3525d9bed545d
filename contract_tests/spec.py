"""What the suite derives from the contract: operations, collections, lists, bodies and mount points.

Nothing here restates the spec. Lists are the operations whose 200 schema is a `Paginated*` envelope.
Collections and their identifiers come from the create operations' links. The gateway's operations are
those whose path item declares a `/customers/v1` server.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from shop_contract import document
from shop_contract.document import SpecError

ENVELOPE_PREFIX = "Paginated"
CLAMPED_MAXIMUM = "x-clamped-maximum"
EXTERNAL_REFERENCE = "x-external-reference"
ORDER_BY = "x-order-by"
HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")

JSON = dict[str, Any]
FORM_MEDIA_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")
"""The request media types that carry a form. A form has no null, so the empty value stands for it, and
its numbers are text."""


@dataclass(frozen=True)
class Operation:
    """One operation of the contract, with its schemas resolved."""

    id: str
    method: str
    path: str
    definition: JSON
    path_item: JSON

    @property
    def label(self) -> str:
        return f"{self.method.upper()} {self.path}"

    @property
    def path_parameters(self) -> list[str]:
        params = [*self.path_item.get("parameters", []), *self.definition.get("parameters", [])]
        return [param["name"] for param in params if param["in"] == "path"]

    @property
    def request_schema(self) -> JSON | None:
        """The JSON request body schema. Every media type shares it in this contract."""
        content = self.definition.get("requestBody", {}).get("content", {})
        media = content.get("application/json")
        return None if media is None else dict(media["schema"])

    @property
    def links(self) -> dict[str, JSON]:
        return dict(self.definition["responses"].get("201", {}).get("links", {}))


@dataclass(frozen=True)
class Collection:
    """A resource kind the client creates, found through its create operation's links."""

    create: Operation
    identifier: str
    list_op: Operation
    item_ops: dict[str, Operation]
    """The linked operations on one item, by method (get, put, patch, delete)."""
    sub_lists: list[Operation]

    @property
    def request_schema(self) -> JSON:
        schema = self.create.request_schema
        assert schema is not None
        return schema


class Spec:
    """The loaded contract, with `$ref`s resolved, and the facts the suite derives from it."""

    def __init__(self, raw: JSON) -> None:
        self.raw = raw
        try:
            self.operations = {op.id: op for op in self._walk_operations()}
            self.gateway_operations = self._gateway_operations(raw["servers"][0]["url"])
        except (KeyError, TypeError, AttributeError, IndexError) as exc:
            raise SpecError(f"the spec is not a usable OpenAPI document ({exc!r})") from exc
        if not self.operations:
            raise SpecError("the spec has no operation to test")

    @classmethod
    def load(cls, path: Path | None = None) -> Spec:
        """The contract at `path`, by default the bundled one."""
        return cls(document.read(path))

    def resolve(self, node: Any) -> Any:
        """A deep copy of `node` with every local `$ref` replaced by its target."""
        return document.dereference(node, self.raw)

    def _walk_operations(self) -> list[Operation]:
        found = []
        for path, item in self.raw["paths"].items():
            path_item = self.resolve({k: v for k, v in item.items() if k not in HTTP_METHODS})
            for method in HTTP_METHODS:
                if method in item:
                    definition = self.resolve(item[method])
                    found.append(Operation(definition["operationId"], method, path, definition, path_item))
        return found

    def is_list(self, op: Operation) -> bool:
        """A list answers a `Paginated*` envelope."""
        if op.method != "get":
            return False
        response = self.raw["paths"][op.path]["get"]["responses"].get("200", {})
        ref = response.get("content", {}).get("application/json", {}).get("schema", {}).get("$ref", "")
        return str(ref).rsplit("/", 1)[-1].startswith(ENVELOPE_PREFIX)

    @cached_property
    def lists(self) -> list[Operation]:
        return [op for op in self.operations.values() if self.is_list(op)]

    @cached_property
    def collections(self) -> list[Collection]:
        found = []
        for create in self.operations.values():
            links = create.links
            if create.method != "post" or not links:
                continue
            item_ops: dict[str, Operation] = {}
            sub_lists: list[Operation] = []
            identifier = ""
            for link in links.values():
                target = self.operations[link["operationId"]]
                (expression,) = link["parameters"].values()
                identifier = expression.removeprefix("$response.body#/")
                if self.is_list(target):
                    sub_lists.append(target)
                else:
                    item_ops[target.method] = target
            list_op = self.find(create.path, "get")
            found.append(Collection(create, identifier, list_op, item_ops, sub_lists))
        return found

    def find(self, path: str, method: str) -> Operation:
        for op in self.operations.values():
            if op.path == path and op.method == method:
                return op
        raise SpecError(f"the spec has no {method.upper()} {path}")

    def by_label(self, label: str) -> Operation | None:
        method, _, path = label.partition(" ")
        return next(
            (op for op in self.operations.values() if op.method == method.lower() and op.path == path),
            None,
        )

    def collection_of(self, op: Operation) -> Collection | None:
        """The collection whose items `op` reads or writes, found by path prefix."""
        for collection in self.collections:
            if op.path.startswith(collection.create.path):
                return collection
        return None

    def _gateway_operations(self, backend: str) -> list[Operation]:
        """Operations whose path item names a server besides the backend (the spec's first server)."""
        return [
            op
            for op in self.operations.values()
            if any(server["url"] != backend for server in op.path_item.get("servers", []))
        ]

    def references(self, op: Operation) -> dict[str, Collection]:
        """Body fields of `op` that name an item of another collection (e.g. a product's `productline`)."""
        schema = op.request_schema
        own = self.collection_of(op)
        if schema is None:
            return {}
        return {
            collection.identifier: collection
            for collection in self.collections
            if collection is not own and collection.identifier in schema.get("properties", {})
        }

    def page_size_maximum(self, op: Operation) -> int | None:
        """The largest page a list serves, which is its `page_size` parameter's `x-clamped-maximum`, if any."""
        maximum = _page_size_schema(op).get(CLAMPED_MAXIMUM)
        return int(maximum) if maximum is not None else None

    def page_size_default(self, op: Operation) -> int | None:
        """The page a list serves when no `page_size` is asked for, which is the parameter's `default`, if any."""
        default = _page_size_schema(op).get("default")
        return int(default) if default is not None else None

    @staticmethod
    def order_by(op: Operation) -> str | None:
        """The field a list is ordered by, ascending (its `x-order-by`), if the spec names one."""
        key = op.definition.get(ORDER_BY)
        return str(key) if key is not None else None

    @staticmethod
    def external_references(schema: JSON | None) -> dict[str, str]:
        """Body fields naming something this interface does not define (`x-external-reference`), by kind."""
        properties = (schema or {}).get("properties", {})
        return {name: str(prop[EXTERNAL_REFERENCE]) for name, prop in properties.items() if EXTERNAL_REFERENCE in prop}

    def example_body(self, schema: JSON) -> JSON:
        """A body built from the properties' `example`s, which are the contract's own idea of valid data."""
        return {
            name: copy.deepcopy(prop["example"]) for name, prop in schema["properties"].items() if "example" in prop
        }


def _page_size_schema(op: Operation) -> JSON:
    """The schema of a list's `page_size` query parameter, or empty when it has none."""
    for param in [*op.path_item.get("parameters", []), *op.definition.get("parameters", [])]:
        if param.get("name") == "page_size" and param.get("in") == "query":
            return dict(param.get("schema", {}))
    return {}
