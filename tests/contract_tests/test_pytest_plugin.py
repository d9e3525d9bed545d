"""The pytest plugin: every CLI option as `--shop-...`, usage errors, one probe, nothing loaded unused.

Each test runs pytest as a user would, in a subprocess from an empty directory (no project config).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

import pytest

from contract_tests.pytest_plugin import cli_actions, shop_option
from contract_tests.run.arguments import parser
from mock_server.app import create_app
from mock_server.settings import Settings
from tests.support.live import running


def run_pytest(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def test_every_cli_option_has_its_shop_option_with_the_same_help_and_choices(tmp_path: Path) -> None:
    done = run_pytest(tmp_path, "--help")
    assert done.returncode == 0, done.stderr
    help_text = " ".join(done.stdout.split())
    cli_options = [a for a in parser()._actions if a.option_strings and a.default != argparse.SUPPRESS]
    assert cli_options == [a for a in cli_options if a.dest in {b.dest for b in cli_actions()}]
    for action in cli_options:
        assert shop_option(action) in help_text
        if action.help:
            assert " ".join(action.help.split()) in help_text, action.help
        for choice in action.choices or ():
            assert str(choice) in help_text
    assert "--shop-request-timeout" in help_text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--shop-profile", "quick"], "argument --shop-profile: invalid choice: 'quick'"),
        (["--shop-workers", "two"], "argument --shop-workers: expected 'auto' or a whole number, got 'two'"),
        (["--shop-shard", "5/4"], "argument --shop-shard: K/N needs 1 <= K <= N, got '5/4'"),
        (["--shop-base-url", "localhost:8000"], "--base-url must be an absolute http(s) URL"),
        (["--shop-base-url", "http://127.0.0.1:1", "--shop-token-url", "http://x"], "--client-secret go together"),
    ],
)
def test_a_bad_value_is_a_usage_error(tmp_path: Path, args: list[str], message: str) -> None:
    done = run_pytest(tmp_path, *args)
    assert done.returncode == pytest.ExitCode.USAGE_ERROR
    assert message in done.stderr
    assert "INTERNALERROR" not in done.stdout + done.stderr and "Traceback" not in done.stderr


def test_an_unreachable_target_is_one_failure_probed_once(tmp_path: Path) -> None:
    target = ["--shop-base-url", "http://127.0.0.1:9/shop/api/v1", "--shop-api-key", "k"]
    done = run_pytest(tmp_path, "-q", "-rfs", *target)
    assert done.returncode == pytest.ExitCode.TESTS_FAILED
    assert "cannot reach the backend at http://127.0.0.1:9/shop/api/v1" in done.stdout
    assert re.search(r"\b1 failed, \d+ skipped in", done.stdout), done.stdout
    assert "not run: the suite could not run (see shop-contract::run_completed)" in done.stdout


def test_a_report_that_cannot_be_written_fails_run_completed_alone_and_the_job_summary_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The CLI's one line, as the run's failure; each check still judged. It was a bare "[Errno 17]" as
    the first check's failure, and no job summary."""
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "summary.md"))
    with running(create_app(Settings())) as origin:
        target = ["--shop-base-url", f"{origin}/shop/api/v1", "--shop-api-key", "dev-api-key"]
        quick = ["--shop-include", "list_product_lines", "--shop-no-conformance", "--shop-seed", "3"]
        done = run_pytest(tmp_path, "-q", *target, *quick, "--shop-junit-xml", str(tmp_path / "file" / "j.xml"))
    assert done.returncode == pytest.ExitCode.TESTS_FAILED
    assert re.search(r"^1 failed, \d+ passed in", done.stdout, re.MULTILINE), done.stdout
    failure = re.search(r" shop-contract::run_completed _+\n(.*)\n=", done.stdout, re.DOTALL)
    assert failure is not None, done.stdout
    assert failure[1].startswith("cannot write the report: [Errno ") and "\n" not in failure[1]
    assert "Traceback" not in done.stdout + done.stderr
    assert (tmp_path / "summary.md").read_text(encoding="utf-8").startswith("### shop-contract: ✅ no violation")


def test_the_plugin_imports_only_the_cli_parser_until_given_a_target() -> None:
    probe = (
        "import sys, contract_tests.pytest_plugin; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('schemathesis', 'hypothesis', 'httpx', 'jwt', 'connexion') or m == 'contract_tests.run.runner'))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "[]"
