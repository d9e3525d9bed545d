"""Where `shop-contract replay` sends the user's credentials: only to a target named on the command line.

A report directory may be anyone's (a CI artifact of a fork's pull request): a findings.json whose
recorded target, or a recorded request's absolute URL, names another host must not make replay send it
anything, with SHOP_CONTRACT_API_KEY and SHOP_CONTRACT_TOKEN set. Real processes: the mock under uvicorn,
a collector socket on another loopback port that records every connection, replay as a subprocess.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from contract_tests.outcome import report
from contract_tests.outcome.findings import Ledger, RunInfo, Violation
from tests.support.elsewhere import MOUNT, SECRETS, Collector, Counted
from tests.support.live import running
from tests.support.suite import ROOT


@pytest.fixture(scope="module")
def mock() -> Iterator[tuple[str, Counted]]:
    counted = Counted()
    with running(counted) as origin:
        yield origin + MOUNT, counted


def recorded(report_dir: Path, target: str, *, setup: tuple[str, ...] = ()) -> str:
    """A findings.json recording `target` and one violation of `list_product_lines` there (after `setup`);
    the violation's id."""
    ledger = Ledger(run=RunInfo(seed=7, profile="fast", suite_version="0", spec_version="1"))
    ledger.run.targets["backend"] = target
    curl = f"curl -X GET -H 'X-API-Key: [Filtered]' -H 'Authorization: [Filtered]' {target}/productlines/"
    ledger.violated(Violation("status_code_conformance", "backend", "list_product_lines", "rule", curl, "", setup))
    report.write_files(ledger, None, report_dir)
    document = (report_dir / "findings.json").read_text()
    return str(json.loads(document)["violations"][0]["id"])


def replay(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-W", "ignore", "-m", "contract_tests", "replay", *args]
    env = {**os.environ, **SECRETS}
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120, env=env)


def test_credentials_are_never_sent_to_the_target_a_report_records(collector: Collector, tmp_path: Path) -> None:
    recorded(tmp_path, collector.origin + MOUNT)
    outcome = replay("--all", "--report-dir", str(tmp_path))
    assert collector.received == [], f"the recorded target got a connection: {collector.received}"
    assert outcome.returncode == 2, outcome.stdout + outcome.stderr
    (line,) = outcome.stderr.strip().splitlines()
    assert line.startswith("shop-contract: error: credentials are set (--api-key, --token, or a SHOP_CONTRACT_")
    assert "name it with --base-url or --gateway-url" in line


def test_a_recorded_request_to_another_host_is_refused_before_anything_is_sent(
    collector: Collector, mock: tuple[str, Counted], tmp_path: Path
) -> None:
    base, counted = mock
    elsewhere = f"curl -X POST -H 'X-API-Key: [Filtered]' -d '{{}}' {collector.origin}/collect"
    name = recorded(tmp_path, base, setup=(elsewhere,))
    before = counted.requests
    outcome = replay(name, "--report-dir", str(tmp_path), "--base-url", base)
    assert collector.received == [], f"the other host got a connection: {collector.received}"
    assert outcome.returncode == 2, outcome.stdout + outcome.stderr
    (line,) = outcome.stderr.strip().splitlines()
    port = collector.origin.rsplit(":", 1)[1]
    assert line == (
        f"shop-contract: error: violation {name} records a request to http://127.0.0.1:{port}, which is not the "
        "target being replayed: refused, nothing sent"
    )
    assert counted.requests == before, "nothing is sent to the target either"


def test_the_recorded_target_s_requests_go_to_the_target_named_on_the_command_line(
    collector: Collector, mock: tuple[str, Counted], tmp_path: Path
) -> None:
    """The recorded target (the collector here) is only where the requests were: replay sends them to the
    one the user names, with the credentials."""
    base, counted = mock
    step = f"curl -X GET -H 'X-API-Key: [Filtered]' {collector.origin}{MOUNT}/productlines/?page=1"
    name = recorded(tmp_path, collector.origin + MOUNT, setup=(step,))
    before = counted.requests
    outcome = replay(name, "--report-dir", str(tmp_path), "--base-url", base)
    assert outcome.returncode == 0, outcome.stdout + outcome.stderr
    assert f"{name}  FIXED" in outcome.stdout
    assert collector.received == []
    assert counted.requests > before
