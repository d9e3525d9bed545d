"""The whole suite against the reference mock over real HTTP: no violation, and every check exercised."""

from __future__ import annotations

from pathlib import Path

from contract_tests.check_names import DOMAIN_CHECKS, SCHEMATHESIS_CHECKS
from mock_server.app import create_app
from mock_server.settings import Settings
from tests.contract.support import credentials, shop_contract, violations
from tests.live import running


def test_a_strict_run_against_the_mock_finds_no_violation_and_exercises_every_check(tmp_path: Path) -> None:
    """The domain tests and every Schemathesis check, each strict check on (negative_data_rejection
    included: positive and negative data, stateful). A strict run judges all a default run does and more,
    so the mock passing it passes both."""
    with running(create_app(Settings())) as origin:
        args = ["--base-url", f"{origin}/shop/api/v1", "--gateway-url", f"{origin}/customers/v1", "--strict"]
        outcome = shop_contract([*args, *credentials(origin), "--seed", "11", "--quiet"], tmp_path)
    assert violations(outcome) == [], outcome.stdout[-6000:] + outcome.stderr
    assert outcome.findings.get("errors") == [], outcome.findings.get("errors")
    assert outcome.code == 0, outcome.stdout[-6000:] + outcome.stderr
    exercised = set(outcome.findings["exercised"])
    assert {*SCHEMATHESIS_CHECKS, *DOMAIN_CHECKS, "negative_data_rejection"} - exercised == set()
    assert (tmp_path / "junit.xml").exists()
