"""Run the suite's CLI as a user would: a subprocess, against an app served on a loopback port."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from contract_tests.client.keyring import Keyring, Realm
from contract_tests.client.surface import Surface
from contract_tests.client.target import limits_of
from contract_tests.client.under_test import Credentials, Target
from contract_tests.judge.run_context import RunContext
from contract_tests.options import Options
from contract_tests.outcome.findings import Ledger
from contract_tests.spec import Spec

ROOT = Path(__file__).resolve().parents[2]
TOKEN_PATH = "/realms/shop/protocol/openid-connect/token"


@dataclass(frozen=True)
class Outcome:
    code: int
    stdout: str
    stderr: str
    findings: dict[str, Any]
    peak_rss_mib: float  # this run's own peak, not the largest of every child the test process had


def credentials(origin: str) -> list[str]:
    return [
        "--api-key", "dev-api-key",
        "--token-url", origin + TOKEN_PATH, "--client-id", "shop-dev", "--client-secret", "shop-dev-secret",
    ]  # fmt: skip


PEAK_LAUNCHER = """
import os, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.executable, [sys.executable, *sys.argv[2:]])
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as peak:
    peak.write(str(usage.ru_maxrss))
code = os.waitstatus_to_exitcode(status)
sys.exit(128 - code if code < 0 else code)
"""
"""Runs a command as its own child and writes that child's peak RSS (KiB) to the file named first. On Linux
a child's peak counts its parent's size at the fork, and a test worker grows to hundreds of MiB, so the
run is forked from this small launcher, not from the worker."""


def shop_contract(
    args: list[str], report_dir: Path | None = None, timeout: float = 300, env: dict[str, str] | None = None
) -> Outcome:
    """`python -m contract_tests ARGS`, with its exit code, output and (given a report dir) findings;
    `env` is added to the environment."""
    extra = ["--report-dir", str(report_dir)] if report_dir is not None else []
    suite = ["-W", "ignore", "-m", "contract_tests", *args, *extra]
    with tempfile.TemporaryDirectory() as scratch, tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        peak = Path(scratch) / "peak"
        command = [sys.executable, "-c", PEAK_LAUNCHER, str(peak), *suite]
        environment = {**os.environ, **(env or {})}
        child = subprocess.Popen(command, cwd=ROOT, stdout=out, stderr=err, env=environment, start_new_session=True)
        try:
            child.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()
            raise
        stdout, stderr = (_text(stream) for stream in (out, err))
        peak_kib = int(peak.read_text()) if peak.exists() else 0
    findings_file = report_dir / "findings.json" if report_dir is not None else None
    findings = json.loads(findings_file.read_text()) if findings_file and findings_file.exists() else {}
    return Outcome(child.returncode, stdout, stderr, findings, peak_kib / 1024)


def _text(stream: IO[bytes]) -> str:
    stream.seek(0)
    return stream.read().decode("utf-8", errors="replace")


def violations(outcome: Outcome) -> list[dict[str, Any]]:
    """The violations a run recorded in its findings.json."""
    found: list[dict[str, Any]] = outcome.findings.get("violations", [])
    return found


def a_run(spec: Spec, options: Options, surface: Surface) -> RunContext:
    """A run object on `surface` that sends no credentials of its own (no keyring token, no realm): for a
    test of how the engine is set up, without building a target (which probes it)."""

    def no_realm(realm: Realm) -> tuple[str, float | None]:
        raise AssertionError("a test run fetches no token")

    keyring = Keyring(None, None, None, no_realm)
    target = Target((surface,), Credentials(), keyring, limits_of(options))
    return RunContext(spec, options, target, Ledger(), lambda line: None)
