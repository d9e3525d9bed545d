"""The whole suite against the reference mock over real HTTP: no violation, and every check exercised."""

from __future__ import annotations

from pathlib import Path

from contract_tests.check_names import DOMAIN_CHECKS, SCHEMATHESIS_CHECKS
from mock_server.app import create_app
from mock_server.settings import Settings
from tests.contract.support import credentials, shop_contract, violations
from tests.live import running


def test_full_run_against_the_mock_finds_no_violation_and_exercises_every_check(tmp_path: Path) -> None:
    with running(create_app(Settings())) as origin:
        args = ["--base-url", f"{origin}/shop/api/v1", "--gateway-url", f"{origin}/customers/v1"]
        outcome = shop_contract([*args, *credentials(origin), "--seed", "11", "--quiet"], tmp_path)
    assert violations(outcome) == [], outcome.stdout[-6000:] + outcome.stderr
    assert outcome.code in (0, 1), outcome.stdout[-6000:] + outcome.stderr  # 1: the mock's "/" defect only
    assert set(SCHEMATHESIS_CHECKS) | set(DOMAIN_CHECKS) <= set(outcome.findings["exercised"])
    assert (tmp_path / "junit.xml").exists()


def test_strict_schemathesis_run_against_the_mock_reports_nothing(tmp_path: Path) -> None:
    """Every Schemathesis check, negative_data_rejection included, positive and negative data, stateful."""
    with running(create_app(Settings())) as origin:
        args = ["--base-url", f"{origin}/shop/api/v1", "--gateway-url", f"{origin}/customers/v1", "--strict"]
        outcome = shop_contract([*args, *credentials(origin), "--no-domain", "--seed", "5", "--quiet"], tmp_path)
    assert outcome.code == 0, outcome.stdout[-6000:] + outcome.stderr
    assert "negative_data_rejection" in outcome.findings["exercised"]
