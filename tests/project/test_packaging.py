"""The distribution's layout: every package is shipped, and the data is read from the package, not the tree."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

from mock_server.settings import DEFAULT_FIXTURES
from shop_contract.document import bundled_fixtures, bundled_spec

ROOT = Path(__file__).resolve().parents[2]
CODE = ("shop_contract", "mock_server", "contract_tests")
SETUPTOOLS = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]


def test_every_package_of_the_source_tree_is_in_the_distribution() -> None:
    found = {
        ".".join(init.parent.relative_to(ROOT).parts) for top in CODE for init in (ROOT / top).rglob("__init__.py")
    }
    assert found <= set(SETUPTOOLS["packages"])


def test_the_data_packages_are_the_folders_people_edit() -> None:
    assert bundled_spec() == ROOT / "openapi" / "openapi.yaml"
    assert bundled_fixtures() == ROOT / "fixtures" == DEFAULT_FIXTURES
    assert {package: ROOT / folder for package, folder in SETUPTOOLS["package-dir"].items()} == {
        "shop_contract.openapi": bundled_spec().parent,
        "shop_contract.fixtures": bundled_fixtures(),
    }


def test_no_module_finds_files_relative_to_its_own_source() -> None:
    """Paths built from `__file__` break in a wheel; the data is read with importlib.resources."""
    offenders = []
    for top in CODE:
        for module in (ROOT / top).rglob("*.py"):
            tree = ast.parse(module.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if isinstance(node, ast.Attribute) and node.attr in ("parent", "parents"):
                    names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
                    if "__file__" in names:
                        offenders.append(f"{module.relative_to(ROOT)}:{node.lineno}")
    assert offenders == []
