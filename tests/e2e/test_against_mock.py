"""The whole suite against the reference mock over real HTTP: no report (no violation, no run error, exit 0),
and every check exercised, in a default run and in a strict run, three seeds each.

A run costs about 50 s of CPU, so all six carry the `mockseeds` marker and run in `tox -e mockseeds`,
which CI runs outside the default run; the default run keeps the fast profile's run against the mock
(tests/contract_tests/test_cli.py) and the sharded run of a representative variant.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from contract_tests.check_names import DOMAIN_CHECKS, SCHEMATHESIS_CHECKS
from mock_server.app import create_app
from mock_server.settings import Settings
from tests.support.live import running
from tests.support.suite import credentials, shop_contract, violations

SEEDS = (11, 23, 37)
RUNS = [
    pytest.param(profile, seed, id=f"{profile}-{seed}", marks=pytest.mark.mockseeds)
    for profile in ("strict", "default")
    for seed in SEEDS
]


@pytest.mark.parametrize(("profile", "seed"), RUNS)
def test_the_suite_reports_nothing_against_the_mock_and_exercises_every_check(
    profile: str, seed: int, tmp_path: Path
) -> None:
    """The domain tests and every Schemathesis check; strict: each strict check on too (negative_data_rejection
    included: positive and negative data, stateful)."""
    strict = ["--strict"] if profile == "strict" else []
    with running(create_app(Settings())) as origin:
        args = ["--base-url", f"{origin}/shop/api/v1", "--gateway-url", f"{origin}/customers/v1", *strict]
        outcome = shop_contract([*args, *credentials(origin), "--seed", str(seed), "--quiet"], tmp_path)
    assert violations(outcome) == [], outcome.stdout[-6000:] + outcome.stderr
    assert outcome.findings.get("errors") == [], outcome.findings.get("errors")
    assert outcome.code == 0, outcome.stdout[-6000:] + outcome.stderr
    exercised = set(outcome.findings["exercised"])
    expected = {*SCHEMATHESIS_CHECKS, *DOMAIN_CHECKS, *(["negative_data_rejection"] if strict else [])}
    assert expected - exercised == set()
    assert (tmp_path / "junit.xml").exists()
