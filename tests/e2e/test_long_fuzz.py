"""A long Schemathesis run against the mock: outside the default run (`tox -e fuzz`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mock_server.app import create_app
from mock_server.settings import Settings
from tests.support.live import running
from tests.support.suite import credentials, shop_contract


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_a_thousand_examples_per_operation_find_nothing(tmp_path: Path) -> None:
    with running(create_app(Settings())) as origin:
        args = ["--base-url", f"{origin}/shop/api/v1", "--gateway-url", f"{origin}/customers/v1", "--strict"]
        outcome = shop_contract(
            [*args, *credentials(origin), "--max-examples", "1000", "--seed", "1000"], tmp_path, timeout=3500
        )
    assert outcome.code == 0, outcome.stdout[-6000:] + outcome.stderr
