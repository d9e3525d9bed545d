"""The layout's promises: the core imports no web framework; the handler table is the spec's."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from mock_server.fixtures import record_fields
from mock_server.memory_store import MemoryStore
from mock_server.routing import handler_table, operation_table
from mock_server.schemas import load_spec

PACKAGE = Path(__file__).resolve().parents[1] / "mock_server"
CORE = [
    "store.py",
    "memory_store.py",
    "overlay_store.py",
    "sessions.py",
    "redis_store.py",
    "redis_layout.py",
    "redis_scripts.py",
    "redis_copy.py",
    "redis_sessions.py",
    "pagination.py",
    "fixtures.py",
    "schemas.py",
    "generate.py",
    "auth.py",
    "inputs.py",
    *(f"realm/{path.name}" for path in (Path(__file__).resolve().parents[1] / "mock_server" / "realm").glob("*.py")),
]
WEB = ("connexion", "starlette", "uvicorn", "httpx")


@pytest.mark.parametrize("module", CORE)
def test_core_modules_import_no_web_framework(module: str) -> None:
    tree = ast.parse((PACKAGE / module).read_text(encoding="utf-8"))
    imported = [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names]
    imported += [node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
    assert not [name for name in imported if name.split(".")[0] in WEB]


def test_the_handler_table_covers_exactly_the_spec_operations() -> None:
    spec = load_spec()
    operation_ids = {
        operation["operationId"]
        for item in spec["paths"].values()
        for operation in item.values()
        if isinstance(operation, dict) and "operationId" in operation
    }
    assert set(handler_table(*operation_table(MemoryStore(record_fields())))) == operation_ids
