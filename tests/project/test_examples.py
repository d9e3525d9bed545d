"""The CI recipes in examples/: pinned, running the suite through its action (action.yml), and using
what they claim to (tests/speclint/test_ci_examples.py lints them with actionlint in `tox -e speclint`,
and .ci/container with actionlint and zizmor)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "github-actions"
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


SUITE_ACTION = "your-org/shop-contract-suite@"


def suite_steps(workflow: Path) -> list[dict[str, Any]]:
    return [step for step in steps(workflow) if step.get("uses", "").startswith(SUITE_ACTION)]


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=lambda path: path.name)
def test_every_action_is_pinned_by_commit_and_the_suite_by_release(workflow: Path) -> None:
    for step in steps(workflow):
        if "uses" in step and not step["uses"].startswith(SUITE_ACTION):
            assert re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", step["uses"]), step["uses"]
    text = workflow.read_text(encoding="utf-8")
    assert "shop-contract-suite" in text and ".git@" not in text
    for tag in re.findall(r"shop-contract-suite@(\S+)", text):
        assert tag.startswith("v0."), tag  # a tag, never a branch


@pytest.mark.parametrize("workflow", ["contract.yml", "contract-sharded.yml", "consumer-contract.yml"])
def test_the_gates_run_the_suite_through_its_action_with_secrets_as_inputs(workflow: str) -> None:
    runs = " ".join(step.get("run", "") for step in steps(EXAMPLES / workflow))
    assert not re.search(r"(^|\s)shop-contract\s+--", runs)  # the suite runs through the action only
    (step,) = suite_steps(EXAMPLES / workflow)
    assert step["with"]["api-key"] == "${{ secrets.SHOP_CONTRACT_API_KEY }}"
    assert "--api-key" not in step["with"].get("args", "") and "secret" not in step["with"].get("args", "")


def test_the_backend_gate_waits_checks_both_surfaces_and_publishes_junit() -> None:
    (step,) = suite_steps(EXAMPLES / "contract.yml")
    assert {"wait", "base-url", "gateway-url", "token-url", "client-id"} <= set(step["with"])
    assert step["with"]["report-dir"] == "contract-report"
    assert step["with"]["client-secret"] == "${{ secrets.SHOP_CONTRACT_CLIENT_SECRET }}"
    junit = [s for s in steps(EXAMPLES / "contract.yml") if s.get("uses", "").startswith("mikepenz/action-junit")]
    assert junit and junit[0]["with"]["report_paths"] == "contract-report/junit.xml"


def test_the_sharded_gate_splits_one_run_over_a_matrix_and_publishes_the_merged_junit() -> None:
    document = yaml.safe_load((EXAMPLES / "contract-sharded.yml").read_text(encoding="utf-8"))
    contract, merge = document["jobs"]["contract"], document["jobs"]["merge"]
    shards = contract["strategy"]["matrix"]["shard"]
    assert shards == list(range(1, len(shards) + 1)) and contract["strategy"]["fail-fast"] is False
    (step,) = suite_steps(EXAMPLES / "contract-sharded.yml")
    assert step["with"]["args"] == f"--shard ${{{{ matrix.shard }}}}/{len(shards)}"
    assert "seed" not in step["with"]  # every shard derives the same seed from the spec and N: none to keep in step
    assert step["with"]["artifact-name"] == "contract-report-${{ matrix.shard }}"
    assert merge["needs"] == "contract" and "cancelled()" in merge["if"]
    merging = " ".join(step.get("run", "") for step in merge["steps"])
    assert "shop-contract merge" in merging and "--report-dir contract-report" in merging
    assert "git+https://" in merge["env"]["SHOP_CONTRACT_SUITE"]
    junit = [s for s in merge["steps"] if s.get("uses", "").startswith("mikepenz/action-junit")]
    assert junit and junit[0]["with"]["report_paths"] == "contract-report/junit.xml"


def test_the_front_end_records_its_consumer_contract_and_the_backend_verifies_it() -> None:
    front = steps(EXAMPLES / "frontend-e2e.yml")
    started = " ".join(step.get("run", "") for step in front)
    assert "--journal-size" in started and "shop-mock contract" in started and "--out consumer-contract/" in started
    kept = [s for s in front if s.get("uses", "").startswith("actions/upload-artifact")]
    assert kept and kept[0]["with"]["name"] == "consumer-contract"
    (step,) = suite_steps(EXAMPLES / "consumer-contract.yml")
    assert step["with"]["args"] == "--consumer consumer-contract/shop-frontend.json" and "base-url" in step["with"]
    assert step["with"]["report-dir"] == "consumer-report"
    junit = [
        s for s in steps(EXAMPLES / "consumer-contract.yml") if s.get("uses", "").startswith("mikepenz/action-junit")
    ]
    assert junit and junit[0]["with"]["report_paths"] == "consumer-report/junit.xml"


COMPOSE = EXAMPLES.parent / "compose"


def test_the_dev_mock_compose_serves_a_fixtures_folder_and_the_dashboard_on_this_machine() -> None:
    document = yaml.safe_load((COMPOSE / "dev-mock.yml").read_text(encoding="utf-8"))
    (mock,) = document["services"].values()
    assert any(volume.endswith(":/fixtures:ro") for volume in mock["volumes"])
    assert mock["environment"]["SHOP_MOCK_FIXTURES"] == "/fixtures"
    assert mock["ports"] == ["127.0.0.1:8000:8000"]  # the admin guard wants the mock's own port in Host


def test_the_shared_mock_compose_puts_two_replicas_on_one_redis_behind_nginx() -> None:
    document = yaml.safe_load((COMPOSE / "shared-mock.yml").read_text(encoding="utf-8"))
    services = document["services"]
    replicas = [name for name, service in services.items() if service.get("image", "").startswith("${SHOP_MOCK_IMAGE")]
    assert len(replicas) == 2
    for name in replicas:
        assert services[name]["environment"]["SHOP_MOCK_STATE"] == "redis://redis:6379/0"
        assert services[name]["environment"]["SHOP_MOCK_ADMIN_TOKEN_FILE"] == "/run/secrets/admin_token"
    assert "./nginx.conf:/etc/nginx/nginx.conf:ro" in services["nginx"]["volumes"]
    upstream = re.search(r"upstream shop_mock \{(.*?)\}", (COMPOSE / "nginx.conf").read_text(encoding="utf-8"), re.S)
    assert upstream and sorted(re.findall(r"server ([\w-]+):8000", upstream.group(1))) == sorted(replicas)
