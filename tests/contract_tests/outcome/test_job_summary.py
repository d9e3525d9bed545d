"""The GitHub job summary (GITHUB_STEP_SUMMARY) is appended to whole or not at all (outcome/files.py, `append`).

A real `shop-contract merge` whose file size limit (RLIMIT_FSIZE) lets the summary file grow by less than
the summary: the kernel takes part of the write, and the part must be taken back, the earlier steps' text
left as it was.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

from contract_tests.outcome import report, step_summary
from contract_tests.outcome.findings import Ledger, RunInfo, Violation
from tests.support.suite import ROOT

EARLIER = "earlier step\n" * 400
ROOM = 100
"""Bytes the summary file may still grow by: fewer than the summary's."""


def test_a_summary_the_file_takes_only_part_of_is_taken_back(tmp_path: Path) -> None:
    violation = Violation("round_trip", "backend", "get_product", "rule", "curl -X GET http://h/p/", "HTTP 200")
    ledger = Ledger(run=RunInfo(seed=7, profile="fast", suite_version="0", spec_version="1", shard="1/1"))
    ledger.violated(violation)
    report.write_files(ledger, None, tmp_path / "shard")
    summary = tmp_path / "summary.md"
    summary.write_text(EARLIER, encoding="utf-8")
    limit = summary.stat().st_size + ROOM

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    # -B: a module compiled under the limit would leave a cut .pyc behind (CPython's write of it does not
    # check for a short write), and every later run of the suite would fail to import it.
    command = [sys.executable, "-B", "-W", "ignore", "-m", "contract_tests", "merge", str(tmp_path / "shard")]
    # Unmeasured under `tox -e coverage`: the file-size limit would also cut coverage's own data file.
    measured = ("COVERAGE_PROCESS_CONFIG", "COVERAGE_PROCESS_START")
    env = {**{k: v for k, v in os.environ.items() if k not in measured}, step_summary.VARIABLE: str(summary)}
    merged = subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, timeout=120, env=env, preexec_fn=limited, check=False
    )
    assert merged.returncode == 1, merged.stderr  # the violation; the summary's failure is only said
    assert summary.read_text(encoding="utf-8") == EARLIER, "a part of the summary was left"
    warning = f"shop-contract: warning: cannot append to {step_summary.VARIABLE} (only {ROOM} of "
    assert merged.stderr.startswith(warning) and merged.stderr.endswith(" bytes could be written (taken back))\n")
