"""Run the suite's CLI as a user would: a process of its own, against an app served on a loopback port."""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jwt

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


def token_expiring_at(exp: float) -> str:
    """A signed JWT whose only time is `exp`, as a realm or `--token` could give it; the suite never checks
    its signature."""
    return jwt.encode({"sub": "shop-dev", "exp": exp}, "a secret of the realm, 32 bytes or more", algorithm="HS256")


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


class Launcher:
    """One `python -m tests.support.launcher`: the suite imported once, each run a child forked from it."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.support.launcher"],
            cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, start_new_session=True,
        )  # fmt: skip

    def run(self, argv: list[str], env: dict[str, str], stdout: Path, stderr: Path, timeout: float) -> tuple[int, int]:
        """The run's exit code and peak RSS (KiB); a run past `timeout` is killed, and TimeoutExpired raised."""
        assert self.process.stdin is not None and self.process.stdout is not None
        request = {"argv": argv, "cwd": str(ROOT), "env": env, "stdout": str(stdout), "stderr": str(stderr)}
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        pid = self._answer(READY_SECONDS)["pid"]
        try:
            ended = self._answer(timeout)
        except BaseException:  # past `timeout`, or the test itself stopped (pytest-timeout, Ctrl-C)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)
            raise
        global _forked_cpu
        with _LOCK:
            _forked_cpu += ended["cpu"]
        return ended["status"], ended["maxrss_kib"]

    def _answer(self, timeout: float) -> dict[str, Any]:
        assert self.process.stdout is not None
        with selectors.DefaultSelector() as waiting:
            waiting.register(self.process.stdout, selectors.EVENT_READ)
            if not waiting.select(timeout):
                raise subprocess.TimeoutExpired(["tests.support.launcher"], timeout)
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"the suite's launcher ended (exit {self.process.wait()})")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def close(self, at_once: bool = False) -> None:
        """Closing its stdin ends the launcher; `at_once` kills it, after a run that did not end as asked."""
        assert self.process.stdin is not None and self.process.stdout is not None
        if at_once:
            self.process.kill()
        self.process.stdin.close()
        self.process.wait()
        self.process.stdout.close()


READY_SECONDS = 60  # a fork answers in milliseconds
_IDLE: list[Launcher] = []
_forked_cpu = 0.0
_LOCK = threading.Lock()  # guards both: runs side by side, on threads of one test, each take a launcher


def forked_cpu_seconds() -> float:
    """CPU seconds of the runs this test process had forked so far: its own children's rusage does not see them."""
    return _forked_cpu


def _launcher() -> Launcher:
    """An idle launcher of this test process, or a new one (runs side by side each take their own)."""
    with _LOCK:
        if _IDLE:
            return _IDLE.pop()
    return Launcher()


@atexit.register
def _close_launchers() -> None:
    for launcher in _IDLE:
        launcher.close()


def shop_contract(
    args: list[str], report_dir: Path | None = None, timeout: float = 300, env: dict[str, str] | None = None
) -> Outcome:
    """`python -W ignore -m contract_tests ARGS`, with its exit code, output and (given a report dir)
    findings; `env` is added to the environment. The run is a process forked from a launcher that has
    the suite imported (tests/support/launcher.py), not a fresh interpreter: the same `main`, 0.55 s of
    CPU less per run. Its peak RSS is its own."""
    extra = ["--report-dir", str(report_dir)] if report_dir is not None else []
    launcher = _launcher()
    with tempfile.TemporaryDirectory() as scratch:
        out, err = Path(scratch) / "stdout", Path(scratch) / "stderr"
        try:
            code, peak_kib = launcher.run([*args, *extra], {**os.environ, **(env or {})}, out, err, timeout)
        except BaseException:
            launcher.close(at_once=True)
            raise
        with _LOCK:
            _IDLE.append(launcher)
        stdout, stderr = (_text(path) for path in (out, err))
    findings_file = report_dir / "findings.json" if report_dir is not None else None
    findings = json.loads(findings_file.read_text()) if findings_file and findings_file.exists() else {}
    return Outcome(code, stdout, stderr, findings, peak_kib / 1024)


def _text(path: Path) -> str:
    """What the run wrote to `path`; none if it ended before it opened its streams."""
    return path.read_bytes().decode("utf-8", errors="replace") if path.exists() else ""


def violations(outcome: Outcome) -> list[dict[str, Any]]:
    """The violations a run recorded in its findings.json."""
    found: list[dict[str, Any]] = outcome.findings.get("violations", [])
    return found


def passed(outcome: Outcome) -> set[tuple[str, str]]:
    """The (check, operation) pairs a run judged and found holding, from its findings.json."""
    return {(entry["check"], entry["operation"]) for entry in outcome.findings["passes"]}


def a_run(spec: Spec, options: Options, surface: Surface) -> RunContext:
    """A run object on `surface` that sends no credentials of its own (no keyring token, no realm): for a
    test of how the engine is set up, without building a target (which probes it)."""

    def no_realm(realm: Realm) -> tuple[str, float | None]:
        raise AssertionError("a test run fetches no token")

    keyring = Keyring(None, None, None, no_realm)
    target = Target((surface,), Credentials(), keyring, limits_of(options))
    return RunContext(spec, options, target, Ledger(), lambda line: None)
