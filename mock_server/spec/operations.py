"""Which operation of the spec a request is, found from its method and path.

An operation has an operationId, a template and a surface. Steering, faults and the journal all
speak of operations as the spec names them. This index is built once from the spec's paths under
each mount point. A lookup is a scan of compiled patterns. It is done only when one of those
features asks, never on a plain request.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mock_server.spec.schemas import Schema
from shop_contract.document import dereference

METHODS = ("get", "put", "post", "patch", "delete")


@dataclass(frozen=True)
class Operation:
    operation_id: str
    method: str  # In upper case.
    template: str  # The spec's path template, such as /products/{productcode}/.
    surface: str  # The mount point's name, "backend" or "gateway".
    responses: dict[str, Schema]  # The dereferenced response object of each status.
    request_body: Schema  # The dereferenced requestBody object, or {} when it takes none.

    def declared(self) -> list[int]:
        """The declared statuses, ascending. A `default` or a `4XX` range is not a status to steer to."""
        return sorted(int(code) for code in self.responses if code.isdecimal())


class OperationIndex:
    def __init__(self, spec: Schema, mounts: Mapping[str, tuple[str, list[str]]]) -> None:
        """`mounts` maps each surface's name to its prefix and the spec paths it serves."""
        self.operations: list[tuple[re.Pattern[str], Operation]] = []
        for surface, (prefix, paths) in mounts.items():
            for path in paths:
                pattern = re.compile(re.sub(r"\\\{\w+\\\}", "[^/]+", re.escape(prefix + path)))
                for method, operation in spec["paths"][path].items():
                    if method not in METHODS or not isinstance(operation, dict):
                        continue
                    responses = dereference(operation.get("responses", {}), spec)
                    body = dereference(operation.get("requestBody", {}), spec)
                    found = Operation(operation["operationId"], method.upper(), path, surface, responses, body)
                    self.operations.append((pattern, found))

    def find(self, method: str, path: str) -> Operation | None:
        for pattern, operation in self.operations:
            if operation.method == method and pattern.fullmatch(path):
                return operation
        return None

    def ids(self) -> set[str]:
        return {operation.operation_id for _, operation in self.operations}

    def templates(self) -> set[str]:
        return {operation.template for _, operation in self.operations}

    def surfaces(self) -> set[str]:
        return {operation.surface for _, operation in self.operations}


def describe(value: Any) -> str:
    return ", ".join(str(item) for item in value) or "none"
