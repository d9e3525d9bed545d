"""Lenient by default, strict on request; and the same suite under pytest through the plugin."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mock_server.app import create_app
from mock_server.settings import Settings
from tests.support.faults import Fault, Scope
from tests.support.live import running
from tests.support.suite import ROOT, credentials, shop_contract

pytestmark = pytest.mark.e2e  # whole runs against the mock under uvicorn (tox -e e2e)

LIST_LINES = ["--include", "list_product_lines", "--no-domain", "--seed", "5", "--quiet"]


def clamp_page_size(scope: Scope, body: bytes) -> bytes:
    """A DRF-like max_page_size of 3: larger page sizes are served as 3."""
    query = scope["query_string"].decode().split("&")
    scope["query_string"] = "&".join(
        "page_size=3" if part.startswith("page_size=") and part[10:].isdigit() and int(part[10:]) > 3 else part
        for part in query
    ).encode()
    return body


def test_clamping_page_size_passes_by_default_and_fails_strict(tmp_path: Path) -> None:
    clamping = Fault(create_app(Settings()), "GET", "/shop/api/v1/productlines/", request=clamp_page_size)
    with running(clamping) as origin:
        base = ["--base-url", f"{origin}/shop/api/v1", *credentials(origin), *LIST_LINES]
        lenient = shop_contract(base, tmp_path / "lenient")
        strict = shop_contract([*base, "--strict-check", "exact_page_size"], tmp_path / "strict")
    assert lenient.code == 0, lenient.stdout[-3000:]
    assert strict.code == 1
    assert {v["check"] for v in strict.findings["violations"]} == {"exact_page_size"}


def test_pytest_plugin_runs_the_suite_with_the_same_options(tmp_path: Path) -> None:
    """... and writes a GitHub job's summary as the CLI does."""
    summary = tmp_path / "step-summary.md"
    with running(create_app(Settings())) as origin:
        options = ["--shop-base-url", f"{origin}/shop/api/v1", "--shop-api-key", "dev-api-key"]
        options += ["--shop-include", "list_product_lines", "--shop-no-conformance", "--shop-seed", "3"]
        done = subprocess.run(
            [sys.executable, "-m", "pytest", *options,
             "-q", "-W", "ignore", "-o", "addopts=", "--rootdir", str(tmp_path), str(tmp_path)],
            cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
            env={**os.environ, "GITHUB_STEP_SUMMARY": str(summary)},
        )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr
    assert " passed" in done.stdout and "failed" not in done.stdout
    assert summary.read_text(encoding="utf-8").startswith("### shop-contract: ✅ no violation")
