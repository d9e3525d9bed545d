"""Run the suite's CLI as a user would: a subprocess, against an app served on a loopback port."""

from __future__ import annotations

import json
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


def shop_contract(args: list[str], report_dir: Path | None = None, timeout: float = 300) -> Outcome:
    """`python -m contract_tests ARGS`, with its exit code, output and (given a report dir) findings."""
    extra = ["--report-dir", str(report_dir)] if report_dir is not None else []
    done = subprocess.run(
        [sys.executable, "-W", "ignore", "-m", "contract_tests", *args, *extra],
        cwd=ROOT, capture_output=True, text=True, timeout=timeout, check=False,
    )  # fmt: skip
    findings_file = report_dir / "findings.json" if report_dir is not None else None
    findings = json.loads(findings_file.read_text()) if findings_file and findings_file.exists() else {}
    return Outcome(done.returncode, done.stdout, done.stderr, findings)


def slash_identifier_defect(violation: dict[str, Any]) -> bool:
    """The mock's own known defect on this branch: an identifier holding "/" is created, then its path
    (`%2F`) answers 404. Helper `mockhard` fixes it in the mock on its branch; once merged, drop this
    filter (tests/contract/test_domain_checks.py::test_the_mock_serves_identifiers_with_a_slash turns XPASS)."""
    return violation["check"] == "identifier_addressable" and 'a slash "/"' in violation["rule"]


def violations_besides_known_mock_defects(outcome: Outcome) -> list[dict[str, Any]]:
    return [v for v in outcome.findings.get("violations", []) if not slash_identifier_defect(v)]
