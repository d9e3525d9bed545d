"""Accepted findings against real targets: a baseline recorded on a broken variant accepts exactly its
violations on another seed, a new defect still fails the gate, an expired entry fails, a fixed one is
listed as not reproduced (and fails `--baseline-strict`), and prune drops it keeping the reasons.

Runs are narrowed to the defect's operation (a few seconds each) except the two that must be whole to
tell what no longer reproduces.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from contract_tests.cli import main
from contract_tests.outcome import baseline, findings_file
from contract_tests.outcome.baseline import PLACEHOLDER
from contract_tests.outcome.findings import Acceptance
from mock_server.app import create_app
from mock_server.settings import Settings
from tests.support.faults import Fault, edit_json
from tests.support.live import running
from tests.support.suite import ROOT, Outcome, credentials, shop_contract
from tests.support.variants import API, VARIANTS, results, set_field

MSRP_VARIANT = next(variant for variant in VARIANTS if variant.name == "product_without_msrp")
QUICK = ["--profile", "fast", "--max-examples", "2", "--quiet"]
NARROW = ["--no-domain", *QUICK]
FIXED_REASON = "fixed in 2.3: the list sends quantities as integers"
STOCK = "backend list_products response_schema_conformance: Response violates schema: '…' is not of type '…'"
"""The fingerprint of a defect fixed since (stock as a string in the list): on no target of these tests."""


def run(app: Any, args: list[str], report_dir: Path, env: dict[str, str] | None = None) -> Outcome:
    with running(app) as origin:
        return shop_contract(["--base-url", f"{origin}/shop/api/v1", *credentials(origin), *args], report_dir, env=env)


def fingerprints(found: list[dict[str, Any]]) -> set[str]:
    return {violation["fingerprint"] for violation in found}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Outcome]:
    """A baseline recorded with --baseline-update on the variant that leaves out `msrp`, seed 7."""
    where = tmp_path_factory.mktemp("recorded")
    path = where / "contract-baseline.yaml"
    args = ["--include", "get_product", *NARROW, "--seed", "7", "--baseline", str(path), "--baseline-update"]
    return path, run(MSRP_VARIANT.build(), args, where / "report")


def copy_of(recorded: tuple[Path, Outcome], tmp_path: Path, **changes: str) -> Path:
    """The recorded baseline as a team keeps it: each reason written, `changes` applied to each entry."""
    path = tmp_path / "contract-baseline.yaml"
    entries = [replace(entry, reason="legacy clients read msrp elsewhere") for entry in baseline.read(recorded[0])]
    baseline.write(path, [replace(entry, **changes) for entry in entries])
    return path


def test_update_records_each_defect_once_with_a_placeholder_reason(recorded: tuple[Path, Outcome]) -> None:
    path, outcome = recorded
    assert outcome.code == 0, outcome.stdout[-3000:] + outcome.stderr
    entries = baseline.read(path)
    found = outcome.findings["baseline"]["accepted"]
    assert [entry.fingerprint for entry in entries] == sorted(fingerprints(found))
    assert {entry.reason for entry in entries} == {PLACEHOLDER}
    assert f"baseline {path}: added {len(entries)} entry(ies)" in outcome.stdout
    assert outcome.findings["violations"] == []


def test_a_baseline_accepts_exactly_its_violations_on_another_seed(
    recorded: tuple[Path, Outcome], tmp_path: Path
) -> None:
    path = copy_of(recorded, tmp_path)
    summary = tmp_path / "step-summary.md"
    args = ["--include", "get_product", *NARROW, "--seed", "8", "--baseline", str(path)]
    outcome = run(MSRP_VARIANT.build(), args, tmp_path / "report", env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert outcome.code == 0, outcome.stdout[-3000:] + outcome.stderr
    accepted = outcome.findings["baseline"]["accepted"]
    assert accepted and fingerprints(accepted) == {entry.fingerprint for entry in baseline.read(path)}
    assert outcome.findings["violations"] == []
    assert findings_file.load(tmp_path / "report" / "findings.json")["baseline"]["judged"] is False  # narrowed
    assert "Result: no new violation, " in outcome.stdout and "accepted by the baseline." in outcome.stdout
    assert "Accepted (fingerprint, violations, reason):" in outcome.stdout
    assert "legacy clients read msrp elsewhere" in (tmp_path / "report" / "summary.txt").read_text()
    junit = ET.parse(tmp_path / "report" / "junit.xml").getroot()
    cases = [case for case in junit.iter("testcase") if case.get("classname") == "backend.get_product"]
    skipped = [case.find("skipped") for case in cases]
    assert any(s is not None and "accepted by the baseline" in (s.get("message") or "") for s in skipped)
    assert junit.get("failures") == "0"
    assert "#### Baseline" in summary.read_text(encoding="utf-8")
    assert summary.read_text(encoding="utf-8").startswith("### shop-contract: ✅ no new violation")
    assert "Accepted findings (baseline)" in (tmp_path / "report" / "report.html").read_text()


def test_a_fingerprint_with_a_line_break_is_refused_naming_the_entry(
    recorded: tuple[Path, Outcome], tmp_path: Path
) -> None:
    """A YAML block scalar (`|`) ends its text with a line break, easy to miss in review: the entry matched
    nothing, so the run failed on the very violations it was meant to accept, without a word why."""
    lines = [f"- fingerprint: |\n    {entry.fingerprint}\n  reason: legacy\n" for entry in baseline.read(recorded[0])]
    path = tmp_path / "contract-baseline.yaml"
    path.write_text("version: 1\naccepted:\n" + "".join(lines), encoding="utf-8")
    args = ["--include", "get_product", *NARROW, "--seed", "8", "--baseline", str(path)]
    outcome = run(MSRP_VARIANT.build(), args, tmp_path / "report")
    assert outcome.code == 2, outcome.stdout[-3000:] + outcome.stderr
    assert outcome.stderr.strip().splitlines() == [
        f"shop-contract: error: --baseline {path} at /accepted/0/fingerprint: holds a control character (a line "
        "break, a tab, an escape): a fingerprint is one line, as the reports show it, and such an entry would "
        "accept nothing"
    ]
    assert not (tmp_path / "report").exists(), "refused before the run"


def test_a_new_defect_fails_the_gate_and_only_it_is_new(recorded: tuple[Path, Outcome], tmp_path: Path) -> None:
    both = Fault(
        MSRP_VARIANT.build(), "GET", f"{API}/products/", response=edit_json(results(set_field("quantityinstock", str)))
    )
    args = ["--include", "get_product", "--include", "list_products", *NARROW, "--seed", "8"]
    outcome = run(both, [*args, "--baseline", str(copy_of(recorded, tmp_path))], tmp_path / "report")
    assert outcome.code == 1, outcome.stdout[-3000:] + outcome.stderr
    assert {v["operation"] for v in outcome.findings["violations"]} == {"list_products"}
    assert {v["operation"] for v in outcome.findings["baseline"]["accepted"]} == {"get_product"}
    new, accepted = outcome.stdout.split("\nBaseline ")
    assert "list_products" in new and "get_product" not in new
    assert "get_product response_schema_conformance" in accepted


def test_an_expired_entry_accepts_nothing(recorded: tuple[Path, Outcome], tmp_path: Path) -> None:
    path = copy_of(recorded, tmp_path, expires="2020-01-31")
    args = ["--include", "get_product", *NARROW, "--seed", "8", "--baseline", str(path)]
    outcome = run(MSRP_VARIANT.build(), args, tmp_path / "report")
    assert outcome.code == 1, outcome.stdout[-3000:] + outcome.stderr
    assert fingerprints(outcome.findings["violations"]) == {entry.fingerprint for entry in baseline.read(path)}
    assert [entry["expires"] for entry in outcome.findings["baseline"]["expired"]] == ["2020-01-31"] * len(
        baseline.read(path)
    )
    assert "Expired (they accept nothing; their violations are new):" in outcome.stdout


@pytest.mark.e2e  # the suite run against real servers: tox -e e2e (issue 37)
def test_a_fixed_defect_is_not_reproduced_and_fails_strict(recorded: tuple[Path, Outcome], tmp_path: Path) -> None:
    path = copy_of(recorded, tmp_path)
    before = path.read_bytes()
    args = [*QUICK, "--seed", "8", "--baseline", str(path), "--baseline-strict"]
    outcome = run(create_app(Settings()), args, tmp_path / "report")  # the correct mock, a whole run
    assert outcome.code == 1, outcome.stdout[-3000:] + outcome.stderr
    listed = outcome.findings["baseline"]["not_reproduced"]
    assert {entry["fingerprint"] for entry in listed} == {entry.fingerprint for entry in baseline.read(path)}
    assert outcome.findings["violations"] == [] and outcome.findings["baseline"]["judged"] is True
    assert "Not reproduced by this complete run (fixed? drop with --baseline-prune):" in outcome.stdout
    assert "not reproduced or expired (--baseline-strict)." in outcome.stdout
    junit = ET.parse(tmp_path / "report" / "junit.xml").getroot()
    assert [case.find("failure") is not None for case in junit.iter("testcase") if case.get("classname") == "baseline"]
    assert path.read_bytes() == before  # strict reads, never writes


@pytest.mark.e2e  # the suite run against real servers: tox -e e2e (issue 37)
def test_prune_drops_the_fixed_entry_and_keeps_every_reason(recorded: tuple[Path, Outcome], tmp_path: Path) -> None:
    path = copy_of(recorded, tmp_path)
    kept = baseline.read(path)
    baseline.write(path, [*kept, Acceptance(STOCK, FIXED_REASON)])
    args = [*QUICK, "--seed", "8", "--baseline", str(path), "--baseline-prune"]
    args += ["--baseline-update"]  # the whole run finds more of the same defect (round trips): recorded too
    outcome = run(MSRP_VARIANT.build(), args, tmp_path / "report")  # a whole run
    assert outcome.code == 0, outcome.stdout[-3000:] + outcome.stderr
    after = {entry.fingerprint: entry for entry in baseline.read(path)}
    assert STOCK not in after
    assert all(after[entry.fingerprint] == entry for entry in kept)  # the reasons written are kept
    assert f"baseline {path}: pruned 1 entry(ies) no longer reproduced" in outcome.stdout
    assert outcome.findings["violations"] == []


def test_merge_judges_the_shards_violations_again(
    recorded: tuple[Path, Outcome], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = copy_of(recorded, tmp_path)
    shards = [tmp_path / "shard-1", tmp_path / "shard-2"]
    with running(MSRP_VARIANT.build()) as origin:
        for number, shard in enumerate(shards, 1):
            args = ["--base-url", f"{origin}/shop/api/v1", *credentials(origin), "--include", "get_product", *NARROW]
            args += ["--seed", "8", "--shard", f"{number}/2", "--baseline", str(path)]
            assert shop_contract(args, shard).code == 0
    assert main(["merge", *map(str, shards), "--report-dir", str(tmp_path / "merged")]) == 0  # the shards' entries
    merged = json.loads((tmp_path / "merged" / "findings.json").read_text())
    assert merged["violations"] == [] and merged["baseline"]["accepted"] and not merged["baseline"]["judged"]
    expired = copy_of(recorded, tmp_path / "expired", expires="2020-01-31")
    assert main(["merge", *map(str, shards), "--baseline", str(expired)]) == 1
    assert "Expired (they accept nothing; their violations are new):" in capsys.readouterr().out


def test_the_pytest_plugin_fails_only_on_new_violations(recorded: tuple[Path, Outcome], tmp_path: Path) -> None:
    path = copy_of(recorded, tmp_path)
    with running(MSRP_VARIANT.build()) as origin:
        options = ["--shop-base-url", f"{origin}/shop/api/v1", "--shop-api-key", "dev-api-key"]
        options += ["--shop-include", "get_product", "--shop-no-domain", "--shop-profile", "fast", "--shop-seed", "8"]
        options += ["--shop-max-examples", "2"]
        options += ["--shop-baseline", str(path), "--shop-report-dir", str(tmp_path / "report")]
        done = subprocess.run(
            [sys.executable, "-m", "pytest", *options,
             "-q", "-W", "ignore", "-o", "addopts=", "--rootdir", str(tmp_path), str(tmp_path)],
            cwd=ROOT, capture_output=True, text=True, timeout=300, check=False, env=dict(os.environ),
        )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr
    assert "shop-contract baseline" in done.stdout and "legacy clients read msrp elsewhere" in done.stdout
    document = json.loads((tmp_path / "report" / "findings.json").read_text())
    assert document["violations"] == [] and document["baseline"]["accepted"]
