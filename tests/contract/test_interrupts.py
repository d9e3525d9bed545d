"""Ctrl-C and SIGTERM (a container runtime stopping `shop-contract` as PID 1) end a run as its time budget
does, with reports that say it stopped; a second signal stops the process at once
(contract_tests/run/interrupts.py). On a real process against the mock served far away."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from contract_tests.client.pacing import BudgetSpent, Pacer
from contract_tests.run.interrupts import Interrupts
from mock_server.app import create_app
from mock_server.settings import Settings
from tests.contract.support import ROOT
from tests.live import running


class Far:
    """The mock, each answer `delay` seconds late."""

    def __init__(self, app: Any, delay: float) -> None:
        self.app, self.delay = app, delay

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            await asyncio.sleep(self.delay)
        await self.app(scope, receive, send)


def started_run(origin: str, report_dir: Path) -> subprocess.Popen[str]:
    """`shop-contract` against `origin`, returned once it has begun testing (its progress names the seed)."""
    command = [sys.executable, "-W", "ignore", "-m", "contract_tests", "--base-url", f"{origin}/shop/api/v1"]
    command += ["--api-key", "dev-api-key", "--seed", "3", "--workers", "4", "--request-timeout", "3"]
    child = subprocess.Popen(
        [*command, "--report-dir", str(report_dir)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert child.stdout is not None
    for line in child.stdout:
        if line.startswith("seed "):
            return child
    raise AssertionError(f"the run ended before testing: {child.wait()} {child.stderr.read() if child.stderr else ''}")


@pytest.mark.parametrize("sent", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_ends_the_run_within_one_deadline_with_reports_that_say_it_stopped(
    sent: signal.Signals, tmp_path: Path
) -> None:
    with running(Far(create_app(Settings()), 0.2)) as origin:
        child = started_run(origin, tmp_path)
        time.sleep(3)  # into the domain tests
        child.send_signal(sent)
        signalled = time.monotonic()
        stdout, stderr = child.communicate(timeout=60)
        elapsed = time.monotonic() - signalled
    assert child.returncode == 2, stdout[-2000:] + stderr
    assert elapsed < 3 + 5  # one request deadline, and the reports, on a loaded machine
    reason = f"interrupted by {sent.name}"
    assert stderr.strip().splitlines()[-1] == f"shop-contract: error: {reason}"
    findings = json.loads((tmp_path / "findings.json").read_text())
    assert findings["aborted"] == reason
    assert findings["unreached"], "what the run did not reach is listed"
    assert f"Result: stopped: {reason}" in stdout
    assert f"the run stopped ({reason}) before these parts" in stdout
    assert (tmp_path / "report.html").exists() and (tmp_path / "junit.xml").exists()


def test_a_second_signal_stops_at_once_without_reports(tmp_path: Path) -> None:
    with running(Far(create_app(Settings()), 2.5)) as origin:
        child = started_run(origin, tmp_path)
        time.sleep(1)  # requests in flight, each answered 2.5 s after it was sent
        child.send_signal(signal.SIGTERM)
        time.sleep(0.3)
        child.send_signal(signal.SIGTERM)
        stdout, stderr = child.communicate(timeout=60)
    assert child.returncode == 2, stdout[-2000:] + stderr
    assert stderr.strip().splitlines()[-1] == "shop-contract: error: SIGTERM again: stopped at once, no report written"
    assert not (tmp_path / "findings.json").exists()


def test_a_signal_before_the_pacer_exists_stops_it_when_it_is_given() -> None:
    interrupts = Interrupts(2)
    interrupts.received(signal.SIGTERM)
    pacer = Pacer(4)
    interrupts.on(pacer.stop)
    with pytest.raises(BudgetSpent, match="interrupted by SIGTERM"):
        pacer.send(lambda: 200, lambda code: code, lambda code: None)
    assert pacer.stopped_by == "interrupted by SIGTERM"
