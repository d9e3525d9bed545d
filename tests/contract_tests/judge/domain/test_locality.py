"""`patch_locality` and the spec's decision `empty-form-value`: a form PATCH's empty value for a nullable string
may read back as null (the mock) or "" (Django REST Framework's own form parsing), and as nothing else.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mock_server.app import create_app
from mock_server.settings import Settings
from tests.support.live import running
from tests.support.ports import free_port
from tests.support.suite import credentials, shop_contract
from tests.support.variants import with_store

pytest.importorskip("django")
pytest.importorskip("rest_framework")
drf = pytest.importorskip("tests.support.drf.server", reason="the DRF test backend is not on this branch")

API = "/shop/api/v1"
ON_PATCHES = ["--include", "patch_product_line", "--include", "patch_customer", "--no-conformance"]
FORMS = ("application/x-www-form-urlencoded", "multipart/form-data")


@pytest.fixture(scope="module")
def realm() -> Iterator[str]:
    """A mock whose realm issues the tokens the DRF backend verifies."""
    port = free_port()
    with running(create_app(Settings(port=port)), port=port) as origin:
        yield origin


def locality_violations(findings: dict[str, Any]) -> list[dict[str, Any]]:
    return [v for v in findings.get("violations", []) if v["check"] == "patch_locality"]


def test_drf_keeping_the_empty_form_value_is_admitted(realm: str, tmp_path: Path) -> None:
    with drf.serve("blank_kept", realm_url=f"{realm}/realms/shop") as origin:
        args = ["--base-url", origin + API, *credentials(realm), "--seed", "11", "--profile", "fast", "--quiet"]
        outcome = shop_contract([*args, *ON_PATCHES, "--checks", "patch_locality"], tmp_path)
    assert outcome.code == 0, outcome.stdout[-4000:] + outcome.stderr
    assert outcome.findings["passes"], "patch_locality judged nothing"


def null_becomes_text(store: Any) -> None:
    """A PATCH setting a field to null stores "-" instead: neither value the decision admits."""
    update = store.update

    def update_with_text(collection: str, key: Any, changes: dict[str, Any]) -> Any:
        return update(collection, key, {name: "-" if value is None else value for name, value in changes.items()})

    store.update = update_with_text


def test_an_empty_form_value_stored_as_something_else_is_caught(tmp_path: Path) -> None:
    with running(with_store(null_becomes_text)()) as origin:
        args = ["--base-url", origin + API, *credentials(origin), "--seed", "11", "--profile", "fast", "--quiet"]
        outcome = shop_contract([*args, *ON_PATCHES, "--checks", "patch_locality"], tmp_path)
    assert outcome.code == 1, outcome.stdout[-4000:] + outcome.stderr
    rules = [v["rule"] for v in locality_violations(outcome.findings)]
    assert any(media in rule and "got '-'" in rule for rule in rules for media in FORMS), rules
