"""The whole suite against the reference mock over real HTTP: no report (no violation, no run error, exit 0),
and every check exercised, in strict runs with three seeds and a default run with one.

Strict judging only adds verdicts on the same requests (judge/domain, judge/engine.py), so a strict run
that reports nothing at a seed says a default run at that seed reports nothing too. The default run
holds that premise: it generates what the strict run of its seed does, and judges a subset of it.

A run costs about 50 s of CPU, so all four carry the `mockseeds` marker and run in `tox -e mockseeds`,
which CI runs outside the default run; the default run keeps the fast profile's run against the mock
(tests/contract_tests/test_cli.py) and the sharded run of a representative variant.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from contract_tests.check_names import DOMAIN_CHECKS, SCHEMATHESIS_CHECKS, STRICT_CHECKS
from mock_server.app import create_app
from mock_server.settings import Settings
from tests.support.live import running
from tests.support.suite import Outcome, credentials, passed, shop_contract, violations

pytestmark = pytest.mark.mockseeds
SEEDS = (11, 23, 37)


def nothing_reported(seed: int, tmp_path: Path, *, strict: bool) -> Outcome:
    """A whole run of `seed` against a fresh mock: the domain tests and every Schemathesis check; strict: each
    strict check on too (negative_data_rejection included: positive and negative data, stateful)."""
    with running(create_app(Settings())) as origin:
        args = ["--base-url", f"{origin}/shop/api/v1", "--gateway-url", f"{origin}/customers/v1"]
        args += ["--strict"] if strict else []
        outcome = shop_contract([*args, *credentials(origin), "--seed", str(seed), "--quiet"], tmp_path)
    assert violations(outcome) == [], outcome.stdout[-6000:] + outcome.stderr
    assert outcome.findings.get("errors") == [], outcome.findings.get("errors")
    assert outcome.code == 0, outcome.stdout[-6000:] + outcome.stderr
    exercised = set(outcome.findings["exercised"])
    expected = {*SCHEMATHESIS_CHECKS, *DOMAIN_CHECKS, *(["negative_data_rejection"] if strict else [])}
    assert expected - exercised == set()
    assert (tmp_path / "junit.xml").exists()
    return outcome


@pytest.mark.parametrize("seed", SEEDS[1:])
def test_a_strict_run_reports_nothing_against_the_mock_and_exercises_every_check(seed: int, tmp_path: Path) -> None:
    nothing_reported(seed, tmp_path, strict=True)


def test_a_default_run_is_its_seeds_strict_run_without_the_strict_checks_and_reports_nothing(tmp_path: Path) -> None:
    """The same seed, strict and not: the same cases generated, part by part (their digests), and every
    verdict of the default run also given in the strict one, which adds only its strict checks'."""
    strict = nothing_reported(SEEDS[0], tmp_path / "strict", strict=True)
    default = nothing_reported(SEEDS[0], tmp_path / "default", strict=False)
    assert default.findings["generated"] == strict.findings["generated"]
    assert passed(default) <= passed(strict)
    assert {check for check, _ in passed(strict) - passed(default)} <= set(STRICT_CHECKS)
