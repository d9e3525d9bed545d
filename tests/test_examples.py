"""The CI recipes in examples/: pinned, and using what they claim to (tests/speclint/test_ci_examples.py
lints them with actionlint in `tox -e speclint`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "github-actions"
WORKFLOWS = sorted(EXAMPLES.glob("*.yml"))


def steps(workflow: Path) -> list[dict[str, Any]]:
    document = yaml.safe_load(workflow.read_text(encoding="utf-8"))
    return [step for job in document["jobs"].values() for step in job["steps"]]


def test_there_is_a_backend_gate_a_sharded_one_and_a_frontend_recipe() -> None:
    assert {path.name for path in WORKFLOWS} == {
        "contract.yml",
        "contract-sharded.yml",
        "frontend-e2e.yml",
        "consumer-contract.yml",
    }


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=lambda path: path.name)
def test_every_action_and_the_suite_are_pinned(workflow: Path) -> None:
    for step in steps(workflow):
        if "uses" in step:
            assert "@v" in step["uses"], step["uses"]
    text = workflow.read_text(encoding="utf-8")
    assert "shop-contract-suite" in text and "git+https://" in text and ".git@" not in text
    assert "@v0." in text or "==" in text  # a tag or a version, never a branch


def test_the_backend_gate_waits_checks_both_surfaces_and_publishes_junit() -> None:
    run = " ".join(step.get("run", "") for step in steps(EXAMPLES / "contract.yml"))
    for option in ("--wait", "--base-url", "--gateway-url", "--report-dir contract-report"):
        assert option in run
    assert "--api-key" not in run and "--client-secret" not in run  # secrets come from the environment
    junit = [s for s in steps(EXAMPLES / "contract.yml") if s.get("uses", "").startswith("mikepenz/action-junit")]
    assert junit and junit[0]["with"]["report_paths"] == "contract-report/junit.xml"


def test_the_sharded_gate_splits_one_run_over_a_matrix_and_publishes_the_merged_junit() -> None:
    document = yaml.safe_load((EXAMPLES / "contract-sharded.yml").read_text(encoding="utf-8"))
    contract, merge = document["jobs"]["contract"], document["jobs"]["merge"]
    shards = contract["strategy"]["matrix"]["shard"]
    assert shards == list(range(1, len(shards) + 1)) and contract["strategy"]["fail-fast"] is False
    run = " ".join(step.get("run", "") for step in contract["steps"])
    assert f"--shard ${{{{ matrix.shard }}}}/{len(shards)}" in run and "--report-dir" in run
    assert "--seed" not in run  # every shard derives the same seed from the spec and N: none to keep in step
    assert "--api-key" not in run and "--client-secret" not in run
    assert merge["needs"] == "contract" and "cancelled()" in merge["if"]
    merging = " ".join(step.get("run", "") for step in merge["steps"])
    assert "shop-contract merge" in merging and "--report-dir contract-report" in merging
    junit = [s for s in merge["steps"] if s.get("uses", "").startswith("mikepenz/action-junit")]
    assert junit and junit[0]["with"]["report_paths"] == "contract-report/junit.xml"


def test_the_front_end_records_its_consumer_contract_and_the_backend_verifies_it() -> None:
    front = steps(EXAMPLES / "frontend-e2e.yml")
    started = " ".join(step.get("run", "") for step in front)
    assert "--journal-size" in started and "shop-mock contract" in started and "--out consumer-contract/" in started
    kept = [s for s in front if s.get("uses", "").startswith("actions/upload-artifact")]
    assert kept and kept[0]["with"]["name"] == "consumer-contract"
    back = steps(EXAMPLES / "consumer-contract.yml")
    run = " ".join(step.get("run", "") for step in back)
    assert "--name consumer-contract" in run and "--consumer consumer-contract/" in run and "--base-url" in run
    assert "--api-key" not in run  # the secret comes from the environment
    junit = [s for s in back if s.get("uses", "").startswith("mikepenz/action-junit")]
    assert junit and junit[0]["with"]["report_paths"] == "consumer-report/junit.xml"
