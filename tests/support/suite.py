"""Run the suite's CLI as a user would: a subprocess, against an app served on a loopback port."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
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


def shop_contract(
    args: list[str], report_dir: Path | None = None, timeout: float = 300, env: dict[str, str] | None = None
) -> Outcome:
    """`python -m contract_tests ARGS`, with its exit code, output and (given a report dir) findings;
    `env` is added to the environment."""
    extra = ["--report-dir", str(report_dir)] if report_dir is not None else []
    command = [sys.executable, "-W", "ignore", "-m", "contract_tests", *args, *extra]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        child = subprocess.Popen(command, cwd=ROOT, stdout=out, stderr=err, env={**os.environ, **(env or {})})
        expired = threading.Event()

        def expire() -> None:
            expired.set()
            child.kill()

        killer = threading.Timer(timeout, expire)
        killer.start()
        try:
            _, status, usage = os.wait4(child.pid, 0)  # wait4: the rusage of this one child
        finally:
            killer.cancel()
        child.returncode = os.waitstatus_to_exitcode(status)
        if expired.is_set():
            raise subprocess.TimeoutExpired(command, timeout)
        stdout, stderr = (_text(stream) for stream in (out, err))
    findings_file = report_dir / "findings.json" if report_dir is not None else None
    findings = json.loads(findings_file.read_text()) if findings_file and findings_file.exists() else {}
    return Outcome(child.returncode, stdout, stderr, findings, usage.ru_maxrss / 1024)


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
