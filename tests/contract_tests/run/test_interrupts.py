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
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from contract_tests.client.pacing import BudgetSpent, Pacer
from contract_tests.outcome import export_tests, findings_file, report
from contract_tests.outcome.findings import Ledger, RunInfo, Violation
from contract_tests.outcome.fingerprint import violation_id
from contract_tests.run.interrupts import Interrupts
from mock_server.app import create_app
from mock_server.settings import Settings
from tests.support.live import running
from tests.support.processes import signalled_at
from tests.support.suite import ROOT


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
    # Each answer 1.5 s late, within the 3 s request deadline even on a loaded machine: at 2.5 s, a run
    # measured under coverage beside three other workers once timed out on its first request.
    with running(Far(create_app(Settings()), 1.5)) as origin:
        child = started_run(origin, tmp_path)
        time.sleep(1)  # requests in flight, each answered 1.5 s after it was sent
        child.send_signal(signal.SIGTERM)
        time.sleep(0.3)
        child.send_signal(signal.SIGTERM)
        stdout, stderr = child.communicate(timeout=60)
    assert child.returncode == 2, stdout[-2000:] + stderr
    assert (
        stderr.strip().splitlines()[-1]
        == "shop-contract: error: SIGTERM again: stopped at once, no further report written"
    )
    assert not (tmp_path / "findings.json").exists()


class NotReady:
    """A target still starting: every request answered 503, the ones asked counted in `asked`."""

    def __init__(self) -> None:
        self.asked = 0

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        self.asked += 1
        await send({"type": "http.response.start", "status": 503, "headers": [(b"content-length", b"0")]})
        await send({"type": "http.response.body", "body": b""})


@pytest.mark.parametrize("sent", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_while_the_run_waits_for_its_target_ends_it_in_one_line(sent: signal.Signals) -> None:
    """Before, `--wait 600` held a SIGTERM for the rest of its ten minutes: the pacer that a signal stops
    did not exist yet."""
    target = NotReady()
    with running(target) as origin:
        command = [sys.executable, "-W", "ignore", "-m", "contract_tests", "--base-url", f"{origin}/shop/api/v1"]
        child = subprocess.Popen(
            [*command, "--api-key", "k", "--wait", "600"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        try:
            waited_since = time.monotonic()
            while target.asked < 2:  # probed, and probing again: inside the wait
                assert child.poll() is None and time.monotonic() - waited_since < 60, "the run never waited"
                time.sleep(0.05)
            child.send_signal(sent)
            signalled = time.monotonic()
            _, stderr = child.communicate(timeout=60)
            elapsed = time.monotonic() - signalled
        finally:
            if child.poll() is None:  # a run that held the signal, not left behind
                child.kill()
                child.communicate()
    assert child.returncode == 2
    lines = stderr.decode().strip().splitlines()
    assert lines == [
        f"shop-contract: {sent.name}: ending the run (again to stop at once)",
        f"shop-contract: error: interrupted by {sent.name} while waiting for the target: the backend at "
        f"{origin}/shop/api/v1 is not ready (HTTP 503)",
    ]
    assert elapsed < 30, "a step of the wait and the exit, on a loaded machine; not the 600 s of --wait"


def test_a_signal_before_the_pacer_exists_stops_it_when_it_is_given() -> None:
    interrupts = Interrupts(2)
    interrupts.received(signal.SIGTERM)
    pacer = Pacer(4)
    interrupts.on(pacer.stop)
    with pytest.raises(BudgetSpent, match="interrupted by SIGTERM"):
        pacer.send(lambda: 200, lambda code: code, lambda code: None, "http://127.0.0.1:1")
    assert pacer.stopped_by == "interrupted by SIGTERM"


REPORTS = ("junit.xml", "findings.json", "report.html", "summary.txt")


@pytest.fixture(scope="module")
def mock_api() -> Iterator[str]:
    with running(create_app(Settings())) as origin:
        yield f"{origin}/shop/api/v1"


def contract(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-W", "ignore", "-m", "contract_tests", *args]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120, env=env)


def whole(path: Path) -> bool:
    """Whether the report file at `path` is whole: findings.json valid against its schema, junit.xml XML, the
    others with the end they are written with."""
    text = path.read_text(encoding="utf-8")
    if path.name == "findings.json":
        try:
            return findings_file.load(path) is not None
        except findings_file.FindingsError:
            return False
    if path.name == "junit.xml":
        try:
            return ET.parse(path).getroot().tag == "testsuite"
        except ET.ParseError:
            return False
    return text.rstrip().endswith("</html>") if path.name == "report.html" else "\nResult: " in text


@pytest.mark.parametrize("created", REPORTS)
def test_signals_the_moment_a_report_file_is_created_leave_every_report_whole_or_absent(
    created: str, mock_api: str, tmp_path: Path
) -> None:
    """SIGTERM, then SIGINT when the reports are being written: each file is whole or not there, with no
    temporary left behind; findings.json is read back by `merge` and `replay` (the `run` of one shard, so
    that `merge` takes it)."""
    reports = tmp_path / "reports"
    env = signalled_at(reports / created)
    run = ["--base-url", mock_api, "--api-key", "dev-api-key", "--include", "list_product_lines", "--no-domain"]
    stopped = contract(*run, "--max-examples", "1", "--shard", "1/1", "--report-dir", str(reports), env=env)
    assert stopped.returncode == 2, stopped.stdout[-2000:] + stopped.stderr
    assert "again: stopped at once" in stopped.stderr.strip().splitlines()[-1]
    present = sorted(path.name for path in reports.iterdir())
    assert set(present) <= set(REPORTS), f"a temporary left behind: {present}"
    for name in present:
        assert whole(reports / name), f"{name} is not whole ({(reports / name).stat().st_size} bytes)"
    if "findings.json" in present:
        merged = contract("merge", str(reports), "--report-dir", str(tmp_path / "merged"))
        assert merged.returncode == 0, merged.stderr
        replayed = contract(
            "replay", "--all", "--report-dir", str(reports), "--base-url", mock_api, "--api-key", "dev-api-key"
        )
        assert (replayed.returncode, replayed.stdout.strip()) == (0, "nothing replayed"), replayed.stderr


UNREACHABLE = "http://127.0.0.1:1/shop/api/v1"


def a_shard(directory: Path) -> Violation:
    """The reports of one shard of one (1/1) holding one violation, written in `directory`; the violation."""
    curl = f"curl -X GET {UNREACHABLE}/products/p"  # on the target it records, so that `replay` takes it
    violation = Violation("round_trip", "backend", "get_product", "rule", curl, "HTTP 200")
    ledger = Ledger(run=RunInfo(seed=7, profile="fast", suite_version="0", spec_version="1", shard="1/1"))
    ledger.run.targets["backend"] = UNREACHABLE
    ledger.violated(violation)
    report.write_files(ledger, None, directory)
    return violation


@pytest.mark.parametrize(
    ("signals", "created", "last_line"),
    [
        ("SIGINT", "findings.json", "shop-contract: error: interrupted by SIGINT"),
        ("SIGTERM", "summary.txt", "shop-contract: error: interrupted by SIGTERM"),
        (
            "SIGTERM SIGINT",
            "report.html",
            "shop-contract: error: SIGINT again: stopped at once, no further report written",
        ),
    ],
)
def test_a_signal_stops_merge_in_one_line_with_its_files_whole_or_absent(
    signals: str, created: str, last_line: str, tmp_path: Path
) -> None:
    """`merge` has no run to end: a first signal stops it where it is, as a second one does a run."""
    a_shard(tmp_path / "shard")
    merged = tmp_path / "merged"
    env = signalled_at(merged / created, signals)
    stopped = contract("merge", str(tmp_path / "shard"), "--report-dir", str(merged), env=env)
    assert stopped.returncode == 2, stopped.stdout[-2000:] + stopped.stderr
    assert stopped.stderr.strip().splitlines()[-1] == last_line, stopped.stderr
    assert "Traceback" not in stopped.stderr
    present = sorted(path.name for path in merged.iterdir())
    assert created not in present and set(present) <= set(REPORTS), f"a temporary left behind: {present}"
    for name in present:
        assert whole(merged / name), f"{name} is not whole ({(merged / name).stat().st_size} bytes)"


def test_the_exported_tests_are_whole_or_absent_when_signals_come_as_they_are_written(tmp_path: Path) -> None:
    """`--export-tests` writes through outcome/files.py too: SIGTERM then SIGINT the moment its file is
    created leave none, nor its temporary."""
    violation = a_shard(tmp_path / "shard")
    exported = tmp_path / "exported"
    env = signalled_at(exported / export_tests.FILE)
    stopped = contract("merge", str(tmp_path / "shard"), "--export-tests", str(exported), env=env)
    assert stopped.returncode == 2, stopped.stdout[-2000:] + stopped.stderr
    assert "again: stopped at once" in stopped.stderr.strip().splitlines()[-1]
    assert list(exported.iterdir()) == [], f"left behind: {[(p.name, p.stat().st_size) for p in exported.iterdir()]}"
    written = contract("merge", str(tmp_path / "shard"), "--export-tests", str(exported))
    assert written.returncode == 1, written.stderr
    assert (exported / export_tests.FILE).read_text().rstrip().endswith(f"_judged({violation_id(violation)!r})")


@pytest.mark.parametrize("sent", ["SIGTERM", "SIGINT"])
def test_a_signal_stops_replay_in_one_line_with_the_exported_tests_whole_or_absent(sent: str, tmp_path: Path) -> None:
    """Before, SIGTERM killed `replay` as it wrote `--export-tests`: no line, exit -15, the file's temporary
    left behind. Now it stops where it is, as `merge` does."""
    a_shard(tmp_path / "shard")
    exported = tmp_path / "exported"
    env = signalled_at(exported / export_tests.FILE, sent)
    args = ["replay", "--all", "--report-dir", str(tmp_path / "shard"), "--export-tests", str(exported)]
    stopped = contract(*args, "--base-url", UNREACHABLE, env=env)
    assert stopped.returncode == 2, stopped.stdout[-2000:] + stopped.stderr
    assert stopped.stderr.strip().splitlines() == [
        f"shop-contract: {sent}: ending the replay (again to stop at once)",
        f"shop-contract: error: interrupted by {sent}",
    ]
    assert list(exported.iterdir()) == [], f"left behind: {[(p.name, p.stat().st_size) for p in exported.iterdir()]}"
