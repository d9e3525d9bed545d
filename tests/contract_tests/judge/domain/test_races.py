"""The checks of concurrent writes catch each race of tests/support/race_variants.py, and the mock
passes them: run through the CLI on a real socket, only the race check selected (a few seconds each)."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from contract_tests import cli
from contract_tests.client.arrival import BUFFERED
from contract_tests.judge.domain import race_references, races
from contract_tests.outcome import export_tests
from mock_server.app import create_app
from mock_server.settings import Settings
from tests.contract_tests.run.test_replay import plain_pytest, plain_python  # noqa: F401  (a fixture)
from tests.mock_server.state.test_redis_store import replicas
from tests.support.live import running
from tests.support.race_variants import RACE_VARIANTS
from tests.support.suite import Outcome, credentials, shop_contract
from tests.support.variants import Variant
from tests.support.zoo.http10 import http10_in_front_of

CHECKS = [*races.CHECKS, *race_references.CHECKS]


def raced(origin: str, checks: list[str], include: tuple[str, ...], report_dir: Path) -> Outcome:
    args = ["--base-url", f"{origin}/shop/api/v1", *credentials(origin), "--seed", "7", "--quiet"]
    args += ["--no-conformance", "--checks", *checks, *(arg for op in include for arg in ("--include", op))]
    return shop_contract(args, report_dir)


@pytest.mark.parametrize("variant", RACE_VARIANTS, ids=str)
def test_race_variant_is_caught_by_its_check(variant: Variant, tmp_path: Path) -> None:
    with running(variant.build()) as origin:
        outcome = raced(origin, [variant.check], variant.include, tmp_path)
    assert outcome.code == 1, outcome.stdout[-3000:] + outcome.stderr
    caught = [violation for violation in outcome.findings["violations"] if violation["check"] == variant.check]
    assert caught, f"{variant.name}: not caught by {variant.check}"
    assert "overlapped tries" in caught[0]["rule"] and "sent +" in caught[0]["rule"]


def test_the_mock_passes_every_race_check(tmp_path: Path) -> None:
    with running(create_app(Settings())) as origin:
        outcome = raced(origin, list(CHECKS), (), tmp_path)
    assert outcome.code == 0, outcome.stdout[-3000:] + outcome.stderr
    assert set(CHECKS) <= set(outcome.findings["exercised"])


def test_behind_a_proxy_serialising_requests_no_race_check_is_exercised_and_none_passes(tmp_path: Path) -> None:
    """The mock behind a proxy taking one request at a time (tests/support/zoo/http10.py): each burst is on
    the wire at once, yet no two requests meet on the server. The target is probed once (client/arrival.py),
    and every check of concurrent writes is listed as not exercised, never passed."""
    with (
        running(create_app(Settings())) as upstream,
        http10_in_front_of(upstream, tmp_path, one_at_a_time=True) as origin,
    ):
        serialised = raced(origin, list(CHECKS), (), tmp_path / "one-at-a-time")
    assert serialised.code == 0, serialised.stdout[-3000:] + serialised.stderr
    assert not set(CHECKS) & set(serialised.findings["exercised"])
    reasons = {skip["check"]: skip["reason"] for skip in serialised.findings["not_exercised"]}
    assert set(CHECKS) <= set(reasons)
    assert all(reasons[check].startswith("no overlap observed: ") for check in CHECKS), reasons


@pytest.mark.e2e  # the suite run against real servers: tox -e e2e (issue 37)
def test_behind_a_proxy_reading_whole_requests_a_race_found_is_reported_and_none_found_is_no_pass(
    tmp_path: Path,
) -> None:
    """Behind a threaded proxy that reads each request whole before forwarding it, as nginx does by default,
    whether two requests met on the server cannot be seen. The mock's checks, finding no race, are listed as
    not exercised with that reason. A race found there is real: a whole-row PATCH's lost update is reported."""
    lost_update = next(variant for variant in RACE_VARIANTS if variant.check == races.LOST_UPDATE)
    with running(create_app(Settings())) as upstream, http10_in_front_of(upstream, tmp_path) as origin:
        clean = raced(origin, list(CHECKS), (), tmp_path / "mock")
    with running(lost_update.build()) as upstream, http10_in_front_of(upstream, tmp_path) as origin:
        broken = raced(origin, [lost_update.check], lost_update.include, tmp_path / "broken")
    assert clean.code == 0 and not set(CHECKS) & set(clean.findings["exercised"]), clean.stdout[-3000:]
    reasons = {skip["check"]: skip["reason"] for skip in clean.findings["not_exercised"]}
    assert all(reasons[check] == f"no overlap observed: {BUFFERED}" for check in CHECKS), reasons
    assert broken.code == 1, broken.stdout[-3000:] + broken.stderr
    assert {violation["check"] for violation in broken.findings["violations"]} == {lost_update.check}


@pytest.mark.e2e  # the suite run against real servers: tox -e e2e (issue 37)
def test_the_mock_on_redis_with_two_workers_passes_every_race_check(redis_url: str, tmp_path: Path) -> None:
    """Two worker processes on one Redis state: a PATCH, a create and a DELETE are each atomic there too
    (compare-and-set Lua scripts, mock_server/state/redis/), whichever worker each connection meets."""
    with replicas(redis_url, 1, "--workers", "2") as (pooled,):
        outcome = raced(f"http://127.0.0.1:{pooled.port}", list(CHECKS), (), tmp_path)
    assert outcome.code == 0, outcome.stdout[-3000:] + outcome.stderr
    assert set(CHECKS) <= set(outcome.findings["exercised"])


def test_replay_of_a_race_is_still_failing_with_its_frequency_on_the_broken_target_and_fixed_on_the_mock(
    tmp_path: Path,
) -> None:
    """`shop-contract replay ID` runs the race again, up to its tries, on the target named."""
    variant = RACE_VARIANTS[0]  # a PATCH writing back the whole row it read
    with running(variant.build()) as broken, running(create_app(Settings())) as correct:
        outcome = raced(broken, [variant.check], variant.include, tmp_path)
        [first] = [v["id"] for v in outcome.findings["violations"] if v["check"] == variant.check]
        verdicts = {}
        for origin in (broken, correct):
            out, err = io.StringIO(), io.StringIO()
            args = ["replay", first, "--report-dir", str(tmp_path), "--base-url", f"{origin}/shop/api/v1"]
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = cli.main([*args, *credentials(origin)])
            verdicts[origin] = (code, out.getvalue() + err.getvalue())
    code, shown = verdicts[broken]
    assert code == 1 and f"{first}  STILL FAILING" in shown and "overlapped tries" in shown, shown
    code, shown = verdicts[correct]
    assert code == 0 and f"{first}  FIXED" in shown, shown


@pytest.mark.e2e  # runs, and the exported file in a fresh venv under plain pytest: tox -e e2e (issue 37)
def test_the_exported_race_test_fails_on_the_broken_target_and_passes_on_the_mock(
    plain_python: Path,  # noqa: F811  (the fixture of test_replay.py)
    tmp_path: Path,
) -> None:
    """`--export-tests`: the race again with threads and httpx only, under plain pytest (no suite installed)."""
    variant = RACE_VARIANTS[0]  # a PATCH writing back the whole row it read
    with running(variant.build()) as broken, running(create_app(Settings())) as correct:
        args = ["--base-url", f"{broken}/shop/api/v1", *credentials(broken), "--seed", "7", "--quiet"]
        args += ["--no-conformance", "--checks", variant.check, "--include", variant.include[0]]
        outcome = shop_contract([*args, "--export-tests", str(tmp_path / "exported")], tmp_path / "report")
        exported = tmp_path / "exported" / export_tests.FILE
        assert outcome.code == 1 and exported.exists(), outcome.stderr
        failing = plain_pytest(plain_python, exported, f"{broken}/shop/api/v1")
        passing = plain_pytest(plain_python, exported, f"{correct}/shop/api/v1")
    assert failing.returncode == 1 and "overlapped tries" in failing.stdout, failing.stdout[-3000:]
    assert passing.returncode == 0 and " passed" in passing.stdout and "skipped" not in passing.stdout


def answered(*codes: int) -> Any:
    """A burst whose requests were answered `codes`, as `races.one_of` reads it."""
    return SimpleNamespace(timed=[SimpleNamespace(response=SimpleNamespace(status_code=code)) for code in codes])


def read_back(body: Any) -> Any:
    return SimpleNamespace(json=lambda: body)


def test_one_of_names_what_two_patches_of_one_field_broke() -> None:
    """Two PATCHes of `phone` at once: the item must hold one of the two values, and nothing else changed."""
    body, pair = {"phone": "1", "city": "Nantes"}, ("2", "3")
    assert (
        races.one_of("phone", pair, body, answered(200, 200), read_back({"phone": "3", "city": "Nantes"}), "patch")
        is None
    )
    neither = races.one_of(
        "phone", pair, body, answered(200, 200), read_back({"phone": "1", "city": "Nantes"}), "patch"
    )
    assert neither == "PATCHes of `phone` to '2' and '3' read back '1', neither of the two"
    others = races.one_of("phone", pair, body, answered(200, 200), read_back({"phone": "2", "city": "Lyon"}), "patch")
    assert (
        others is not None and others.startswith("PATCHes of `phone` alone changed other fields: ") and "city" in others
    )
    refused = races.one_of(
        "phone", pair, body, answered(200, 409), read_back({"phone": "2", "city": "Nantes"}), "patch"
    )
    assert refused == "a PATCH of an existing item answered 409, not success"
