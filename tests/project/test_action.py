"""action.yml, the suite's composite GitHub Action, as a runner runs it: its run steps executed by bash
with the inputs in their environment, the suite against a real mock, the output, the job summary and
the verdict. (actionlint and zizmor lint it in .ci/container; GitHub itself is not needed.)"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from mock_server.app import create_app
from mock_server.settings import Settings
from tests.support.live import running

ACTION = yaml.safe_load((Path(__file__).resolve().parents[2] / "action.yml").read_text(encoding="utf-8"))
STEPS: list[dict[str, Any]] = ACTION["runs"]["steps"]


def step(name_part: str) -> dict[str, Any]:
    (found,) = [s for s in STEPS if name_part in s.get("name", "")]
    return found


def run_step(found: dict[str, Any], tmp_path: Path, values: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """The step's script under bash as a runner starts it, `${{ inputs.x }}` and `${{ steps... }}` filled."""

    def filled(template: str) -> str:
        return re.sub(r"\$\{\{\s*([\w.-]+)\s*\}\}", lambda m: values.get(m.group(1), ""), template)

    environ = {name: value for name, value in os.environ.items() if not name.startswith("SHOP_CONTRACT_")}
    environ |= {name: filled(str(value)) for name, value in found.get("env", {}).items()}
    environ |= {
        "RUNNER_TEMP": str(tmp_path),
        "GITHUB_OUTPUT": str(tmp_path / "output"),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
    }
    command = ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", found["run"]]
    return subprocess.run(command, env=environ, cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False)


def inputs(**given: str) -> dict[str, str]:
    values = {f"inputs.{name}": str(spec.get("default", "")) for name, spec in ACTION["inputs"].items()}
    return values | {f"inputs.{name}": value for name, value in given.items()}


@pytest.fixture
def installed(tmp_path: Path) -> Path:
    """What the install step leaves in RUNNER_TEMP: here, the suite of this checkout."""
    bin_dir = tmp_path / "shop-contract-suite" / "bin"
    bin_dir.mkdir(parents=True)
    launcher = bin_dir / "shop-contract"
    launcher.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m contract_tests "$@"\n', encoding="utf-8")
    launcher.chmod(0o755)
    return tmp_path


def test_the_run_step_passes_the_inputs_and_the_secret_through_the_environment(installed: Path) -> None:
    app = create_app(Settings(api_keys=frozenset({"only-the-input-knows"})))
    with running(app) as origin:
        done = run_step(
            step("Check the service"),
            installed,
            inputs(**{
                "base-url": f"{origin}/shop/api/v1",
                "api-key": "only-the-input-knows",
                "seed": "3",
                "wait": "10",
                "report-dir": "gate-report",
                "args": "--include list_product_lines --include get_product_line --no-domain --max-examples 5",
            }),
        )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert (installed / "output").read_text(encoding="utf-8") == "exit-code=0\n", done.stdout + done.stderr
    assert "only-the-input-knows" not in done.stdout + done.stderr
    assert (installed / "gate-report" / "junit.xml").is_file() and (installed / "summary.md").stat().st_size > 0


def test_a_refused_credential_is_the_suite_exit_code_in_the_output_not_a_failed_step(installed: Path) -> None:
    app = create_app(Settings(api_keys=frozenset({"the-right-key"})))
    with running(app) as origin:
        done = run_step(
            step("Check the service"),
            installed,
            inputs(
                **{
                    "base-url": f"{origin}/shop/api/v1",
                    "api-key": "a-wrong-key",
                    "args": "--include list_product_lines --no-domain",
                }
            ),
        )
    assert done.returncode == 0, done.stderr  # the upload still runs; the verdict step fails the job
    assert (installed / "output").read_text(encoding="utf-8") in {"exit-code=1\n", "exit-code=2\n"}


@pytest.mark.parametrize(("code", "exit_code"), [("0", 0), ("1", 1), ("2", 2)])
def test_the_verdict_step_fails_the_job_unless_the_suite_found_nothing(
    tmp_path: Path, code: str, exit_code: int
) -> None:
    done = run_step(step("verdict"), tmp_path, {"steps.run.outputs.exit-code": code})
    assert done.returncode == exit_code
    assert ("::error" in done.stdout) == (exit_code != 0)


def test_the_action_installs_from_its_own_ref_and_uploads_with_a_pinned_upload_artifact() -> None:
    install = step("Install")
    assert install["env"]["ACTION_PATH"] == "${{ github.action_path }}" and '"$ACTION_PATH"' in install["run"]
    upload = step("Keep the report")
    assert re.fullmatch(r"actions/upload-artifact@[0-9a-f]{40}", upload["uses"])
    assert upload["with"]["path"] == "${{ inputs.report-dir }}"
    assert {"base-url", "gateway-url", "api-key", "token", "client-secret", "profile", "baseline", "report-dir"} <= set(
        ACTION["inputs"]
    )
    assert '--baseline "$BASELINE"' in step("Check the service")["run"]
