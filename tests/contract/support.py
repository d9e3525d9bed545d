"""Run the suite's CLI as a user would: a subprocess, against an app served on a loopback port."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
TOKEN_PATH = "/realms/shop/protocol/openid-connect/token"


@dataclass(frozen=True)
class Outcome:
    code: int
    stdout: str
    stderr: str
    findings: dict[str, Any]


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
    done = subprocess.run(
        [sys.executable, "-W", "ignore", "-m", "contract_tests", *args, *extra],
        cwd=ROOT, capture_output=True, text=True, timeout=timeout, check=False, env={**os.environ, **(env or {})},
    )  # fmt: skip
    findings_file = report_dir / "findings.json" if report_dir is not None else None
    findings = json.loads(findings_file.read_text()) if findings_file and findings_file.exists() else {}
    return Outcome(done.returncode, done.stdout, done.stderr, findings)


def violations(outcome: Outcome) -> list[dict[str, Any]]:
    """The violations a run recorded in its findings.json."""
    found: list[dict[str, Any]] = outcome.findings.get("violations", [])
    return found
