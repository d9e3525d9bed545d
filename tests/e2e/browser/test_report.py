"""report.html in a real browser: Debian's Chromium (Playwright), the page opened from file:// with the
network off, for a real run against a broken variant of the mock, for the merged report of the same
run in two shards, and for a page full of a hostile target's text.

Without chromium or playwright the tests skip and say why; in `tox -e browser` (SHOP_BROWSER_TESTS=
required) they fail instead. Screenshots stay in each test's tmp dir, and are copied to
SHOP_REPORT_ARTIFACTS when it names a directory (CI uploads it).
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from contract_tests.outcome import html_report, report
from contract_tests.spec import Spec
from mock_server.settings import DEFAULT_API_KEY
from tests.contract_tests.outcome.test_report import HOSTILE_BODY, hostile_violation, ledger_with
from tests.support.browser import kept_screenshot
from tests.support.live import running
from tests.support.suite import ROOT, shop_contract
from tests.support.variants import VARIANTS

pytestmark = pytest.mark.browser

VARIANT = next(v for v in VARIANTS if v.name == "product_without_msrp")
OPERATIONS = ("get_product", "list_products")
EXPECTED = {("get_product", "response_schema_conformance")}


class Opened:
    """A report opened offline, with what the page logged and every network request it tried."""

    def __init__(self, browser: Any, html: Path) -> None:
        self.context = browser.new_context(offline=True, viewport={"width": 1200, "height": 900})
        self.page = self.context.new_page()
        self.problems: list[str] = []
        self.requested: list[str] = []
        self.page.on("console", lambda m: self.problems.append(m.text) if m.type in ("error", "warning") else None)
        self.page.on("pageerror", lambda error: self.problems.append(str(error)))
        self.page.on("dialog", lambda dialog: (self.problems.append(f"dialog {dialog.message}"), dialog.dismiss()))
        self.page.on(
            "request", lambda request: None if request.url.startswith("file:") else self.requested.append(request.url)
        )
        self.page.goto(html.as_uri())

    def violated_cells(self) -> set[tuple[str, str]]:
        cells = self.page.locator('td.cell[data-state="violated"]')
        found = (
            (cells.nth(i).get_attribute("data-operation"), cells.nth(i).get_attribute("data-check"))
            for i in range(cells.count())
        )
        return {(str(operation), str(check)) for operation, check in found}

    def keep(self, tmp_path: Path, name: str) -> Path:
        return kept_screenshot(self.page, tmp_path, name, full_page=True)

    def close(self) -> None:
        self.context.close()


def reproduced(curl: str) -> tuple[int, str]:
    """Run a curl copied from the page, with the credential it masks put back: (status, body)."""
    words = shlex.split(curl.replace("[Filtered]", DEFAULT_API_KEY))
    done = subprocess.run(
        [*words, "-sS", "-w", "\n%{http_code}"], capture_output=True, text=True, timeout=30, check=True
    )
    body, _, status = done.stdout.rpartition("\n")
    return int(status), body


def assert_shows_the_variant(opened: Opened, origin: str) -> None:
    assert opened.problems == [] and opened.requested == []
    assert opened.violated_cells() == EXPECTED
    passed = opened.page.locator('td.cell[data-state="passed"][data-operation="list_products"]')
    assert passed.count() > 0
    link = opened.page.locator('td.cell[data-state="violated"] a').first
    link.focus()
    opened.page.keyboard.press("Enter")
    assert opened.page.evaluate("location.hash") == "#violation-1"
    spec = opened.page.locator("#violation-1 a", has_text="openapi.yaml")
    op = Spec.load().operations["get_product"]
    escaped = op.path.replace("~", "~0").replace("/", "~1")
    assert spec.inner_text() == f"openapi.yaml #/paths/{escaped}/{op.method}/responses/200/content"
    assert opened.page.locator(str(spec.get_attribute("href"))).inner_text().startswith("backend get_product")
    curl = opened.page.locator("#violation-1 pre.curl").inner_text()
    assert origin in curl
    status, body = reproduced(curl)
    assert status == 200 and '"productcode"' in body and '"msrp"' not in body


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-W", "ignore", "-m", "contract_tests", *args]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)


def run_args(origin: str) -> list[str]:
    args = ["--base-url", f"{origin}/shop/api/v1", "--api-key", DEFAULT_API_KEY, "--seed", "7", "--quiet"]
    return [*args, "--no-domain", "--profile", "fast", *(arg for op in OPERATIONS for arg in ("--include", op))]


def test_the_report_of_a_broken_variant_shows_its_violation_and_its_curl_reproduces_it(
    chromium: Any, tmp_path: Path
) -> None:
    with running(VARIANT.build()) as origin:
        outcome = shop_contract(run_args(origin), tmp_path / "run")
        assert outcome.code == 1, outcome.stdout[-3000:] + outcome.stderr
        opened = Opened(chromium, tmp_path / "run" / "report.html")
        try:
            assert_shows_the_variant(opened, origin)
            figure = opened.page.locator("#coverage-figure").inner_text()
            coverage = outcome.findings["coverage"]
            assert f"{coverage['seen_responses']} of {coverage['documented_responses']} documented" in figure
            assert opened.page.locator("#timings svg rect").count() >= len(OPERATIONS)
            assert opened.keep(tmp_path, "report.png").stat().st_size > 0
        finally:
            opened.close()


def test_the_merged_report_of_a_sharded_run_shows_the_same(chromium: Any, tmp_path: Path) -> None:
    with running(VARIANT.build()) as origin:
        shards = [tmp_path / f"shard{index}" for index in (1, 2)]
        codes = [
            cli(*run_args(origin), "--shard", f"{i}/2", "--report-dir", str(d)).returncode
            for i, d in enumerate(shards, 1)
        ]
        merged = cli("merge", *map(str, shards), "--report-dir", str(tmp_path / "merged"))
        assert sorted(codes) in ([0, 1], [1, 1]) and merged.returncode == 1, merged.stdout[-3000:] + merged.stderr
        assert merged.stdout.rstrip().splitlines()[-3] == f"Report: {tmp_path / 'merged' / 'report.html'}"
        opened = Opened(chromium, tmp_path / "merged" / "report.html")
        try:
            assert_shows_the_variant(opened, origin)
            assert "2" in opened.page.locator("dt:has-text('Shards merged') + dd").inner_text()
            assert "--shard" not in opened.page.locator("#command").inner_text()
            opened.keep(tmp_path, "report-merged.png")
        finally:
            opened.close()


def test_a_not_exercised_reason_shows_on_keyboard_focus_and_print_drops_the_buttons(
    chromium: Any, tmp_path: Path
) -> None:
    ledger = ledger_with([hostile_violation()], Spec.load())
    ledger.skipped("backend", "get_product", "round_trip", "the item to read could not be created (HTTP 400)")
    page = tmp_path / "report.html"
    page.write_text(html_report.render(report.as_json(ledger)), encoding="utf-8")
    opened = Opened(chromium, page)
    try:
        cell = opened.page.locator('td.cell[data-state="not exercised"][data-check="round_trip"]')
        tip = cell.locator(".tip")
        assert not tip.is_visible()
        for _ in range(200):  # by keyboard alone: Tab until the cell has the focus
            opened.page.keyboard.press("Tab")
            if opened.page.evaluate("document.activeElement.dataset.check") == "round_trip":
                break
        assert tip.is_visible() and "could not be created (HTTP 400)" in tip.inner_text()
        assert opened.page.locator("button.copy").first.is_visible()
        opened.page.emulate_media(media="print")
        assert not opened.page.locator("button.copy").first.is_visible()
        assert opened.problems == []
    finally:
        opened.close()


def test_a_hostile_targets_text_is_shown_as_text_and_never_runs(chromium: Any, tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    page.write_text(
        html_report.render(report.as_json(ledger_with([hostile_violation()], Spec.load()))), encoding="utf-8"
    )
    opened = Opened(chromium, page)
    try:
        assert opened.problems == [] and opened.requested == []
        assert opened.page.evaluate("window.pwned") is None
        assert opened.page.locator("img").count() == 0 and opened.page.locator("script").count() == 2
        assert HOSTILE_BODY in opened.page.locator("#violation-1 pre.response").inner_text()
        assert opened.violated_cells() == EXPECTED
    finally:
        opened.close()
