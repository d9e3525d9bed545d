"""The dashboard in a real browser: Debian's Chromium (Playwright) on a mock served by real uvicorn.

Without chromium or playwright the tests skip and say why; in `tox -e browser` (SHOP_BROWSER_TESTS=
required) they fail instead. Screenshots stay in each test's tmp dir, and are copied to
SHOP_REPORT_ARTIFACTS when it names a directory (CI uploads it).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from mock_server.app import MockApp, create_app
from mock_server.settings import DEFAULT_API_KEY, Settings
from tests.browser import kept_screenshot
from tests.live import running

pytestmark = pytest.mark.browser

UI = "/__mock__/ui/"
KEY = {"X-API-Key": DEFAULT_API_KEY}
HOSTILE = "<img src=x onerror=window.pwned=1>"
LINES = "/shop/api/v1/productlines/"


class Opened:
    """The dashboard opened in a fresh browser context, with what it logged and any dialog it raised."""

    def __init__(self, browser: Any, origin: str, **context: Any) -> None:
        self.context = browser.new_context(viewport={"width": 1300, "height": 850}, **context)
        self.page = self.context.new_page()
        self.problems: list[str] = []
        self.page.on("console", lambda m: self.problems.append(m.text) if m.type in ("error", "warning") else None)
        self.page.on("pageerror", lambda error: self.problems.append(str(error)))
        self.page.on("dialog", lambda dialog: (self.problems.append(f"dialog {dialog.message}"), dialog.dismiss()))
        self.response = self.page.goto(origin + UI)

    def live(self) -> None:
        self.page.wait_for_selector("#status.live", timeout=5000)

    def tab(self, name: str) -> None:
        self.page.click(f"#tab-{name}")

    def keep(self, tmp_path: Path, name: str) -> Path:
        return kept_screenshot(self.page, tmp_path, name)

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def served() -> Iterator[tuple[MockApp, str]]:
    app = create_app(Settings())
    with running(app) as origin:
        yield app, origin


@pytest.fixture
def opened(chromium: Any, served: tuple[MockApp, str]) -> Iterator[Opened]:
    page = Opened(chromium, served[1])
    try:
        yield page
    finally:
        page.close()


def test_a_request_shows_within_a_second_with_its_credential_masked_and_hostile_text_as_text(
    served: tuple[MockApp, str], opened: Opened, tmp_path: Path
) -> None:
    _, origin = served
    opened.live()
    sent = time.monotonic()
    answer = httpx.post(origin + LINES, json={"productline": HOSTILE}, headers={**KEY, "X-Hostile": HOSTILE})
    assert answer.status_code == 201
    row = opened.page.locator("#live tbody tr", has_text="create_product_line")
    row.wait_for(timeout=1000)
    assert time.monotonic() - sent < 1.0
    row.focus()
    opened.page.keyboard.press("Enter")  # keyboard: a row opens with Enter
    detail = opened.page.locator("#d-request-headers")
    assert detail.locator("tr", has_text="x-api-key").locator("td").nth(1).text_content() == "***"
    assert DEFAULT_API_KEY not in opened.page.locator("#detail").inner_text()
    assert detail.locator("tr", has_text="x-hostile").locator("td").nth(1).text_content() == HOSTILE
    assert HOSTILE in str(opened.page.locator("#d-request-body").text_content())
    assert opened.page.locator("#detail img, #live img").count() == 0
    assert opened.page.evaluate("window.pwned") is None
    curl = opened.page.locator("#d-curl").input_value()
    assert curl.startswith(f"curl -X POST '{origin}{LINES}'") and "'X-API-Key: ***'" in curl.replace(
        "x-api-key", "X-API-Key"
    )
    opened.keep(tmp_path, "dashboard-requests.png")
    assert opened.problems == []


def test_a_fault_rule_entered_in_the_page_applies_to_the_next_request(
    served: tuple[MockApp, str], opened: Opened, tmp_path: Path
) -> None:
    _, origin = served
    opened.live()
    opened.tab("faults")
    opened.page.fill("#rules", '[{"operationId": "get_product", "fault": "explode"}]')
    opened.page.click("#faults-save")
    refused = opened.page.locator("#faults-message.error", has_text="Fault rules not installed")  # the server's word
    refused.wait_for(timeout=2000)
    assert "explode" in refused.inner_text()
    opened.page.fill("#rules", '[{"operationId": "get_product", "fault": "status", "status": 503}]')
    opened.page.click("#faults-save")
    opened.page.locator("#faults-message", has_text="rules installed").wait_for(timeout=2000)
    assert httpx.get(origin + "/shop/api/v1/products/S10_1678/", headers=KEY).status_code == 503
    opened.keep(tmp_path, "dashboard-faults.png")
    opened.tab("requests")
    opened.page.locator("#live tbody tr", has_text="503").click()
    assert json.loads(opened.page.inner_text("#d-fault"))["fault"] == "status"  # the fault applied, shown
    opened.tab("faults")
    opened.page.click("#faults-clear")
    opened.page.locator("#faults-message", has_text="rules cleared").wait_for(timeout=2000)
    assert httpx.get(origin + "/shop/api/v1/products/S10_1678/", headers=KEY).status_code == 200
    assert [p for p in opened.problems if "status of 400" not in p] == []  # the refused PUT is logged by Chromium


def test_a_session_reset_from_the_page_resets_it(served: tuple[MockApp, str], opened: Opened, tmp_path: Path) -> None:
    _, origin = served
    session = {**KEY, "X-Mock-Session": "alice"}
    assert httpx.post(origin + LINES, json={"productline": "Rockets"}, headers=session).status_code == 201
    assert httpx.get(origin + LINES + "Rockets/", headers=session).status_code == 200
    opened.live()
    opened.tab("sessions")
    opened.page.click('button[aria-label="Reset session alice"]')
    opened.page.locator("#sessions-message", has_text="session alice reset").wait_for(timeout=2000)
    assert httpx.get(origin + LINES + "Rockets/", headers=session).status_code == 404
    opened.keep(tmp_path, "dashboard-sessions.png")
    for name in ("state", "steering"):
        opened.tab(name)
        opened.page.wait_for_timeout(200)
        opened.keep(tmp_path, f"dashboard-{name}.png")
    assert opened.problems == []


def test_the_page_is_refused_from_a_foreign_origin_and_a_rebound_host(
    chromium: Any, served: tuple[MockApp, str], tmp_path: Path
) -> None:
    app, origin = served
    with running(create_app(Settings())) as other:  # a page of another origin
        foreign = Opened(chromium, other)
        try:
            foreign.live()
            outcome = foreign.page.evaluate(
                "url => fetch(url, {method: 'DELETE'}).then(r => 'read ' + r.status, e => 'refused: ' + e.name)",
                origin + "/__mock__/faults",
            )
            assert outcome == "refused: TypeError"
            streamed = foreign.page.evaluate(
                "url => fetch(url).then(r => 'read ' + r.status, e => 'refused: ' + e.name)", origin + UI + "stream"
            )
            assert streamed == "refused: TypeError" and app.journal.subscribers == []
        finally:
            foreign.close()
    # a name rebound to the mock's address (the browser sends Host: rebound.test), through a proxy
    rebound = Opened(chromium, "http://rebound.test", proxy={"server": origin})
    try:
        assert rebound.response is not None and rebound.response.status == 403
        assert "own address" in json.loads(rebound.page.inner_text("body"))["detail"]
        rebound.keep(tmp_path, "dashboard-rebound.png")
    finally:
        rebound.close()


def test_with_a_token_the_page_asks_for_it_and_sends_it_as_a_header(chromium: Any, tmp_path: Path) -> None:
    app = create_app(Settings(admin_token="dash-token"))
    with running(app) as origin:
        opened = Opened(chromium, origin)
        try:
            seen: list[tuple[str, str | None]] = []
            opened.page.on("request", lambda r: seen.append((r.url, r.headers.get("authorization"))))
            token = opened.page.locator("#token")
            token.wait_for(timeout=5000)  # the stream was refused (401): the page asks
            assert app.journal.subscribers == []
            token.fill("dash-token")
            token.press("Enter")
            opened.live()
            assert httpx.get(origin + "/shop/api/v1/products/S10_1678/", headers=KEY).status_code == 200
            opened.page.locator("#live tbody tr", has_text="get_product").wait_for(timeout=1000)
            assert all("dash-token" not in url for url, _ in seen)
            assert "Bearer dash-token" in [header for _, header in seen]
            opened.keep(tmp_path, "dashboard-token.png")
        finally:
            opened.close()


def test_the_page_follows_the_systems_dark_or_light_setting(chromium: Any, served: tuple[MockApp, str]) -> None:
    backgrounds = {}
    for scheme in ("light", "dark"):
        opened = Opened(chromium, served[1], color_scheme=scheme)
        try:
            opened.live()
            backgrounds[scheme] = opened.page.evaluate("getComputedStyle(document.body).backgroundColor")
            assert opened.problems == []
        finally:
            opened.close()
    assert backgrounds == {"light": "rgb(255, 255, 255)", "dark": "rgb(21, 24, 28)"}


def test_the_state_view_counts_searches_imports_with_the_servers_word_and_resets(
    served: tuple[MockApp, str], opened: Opened, tmp_path: Path
) -> None:
    _, origin = served
    assert httpx.post(origin + LINES, json={"productline": "Rockets"}, headers=KEY).status_code == 201
    opened.live()
    opened.tab("state")
    opened.page.locator("#counts button", has_text="productlines 9").wait_for(timeout=2000)
    opened.page.fill("#state-search", "rockets")
    assert opened.page.locator("#items tbody tr").count() == 1
    assert "(1 items)" in opened.page.inner_text("#state-page")
    bad = {"name": "bad.json", "mimeType": "application/json", "buffer": b'{"products": 1}'}
    opened.page.set_input_files("#state-import", files=[bad])
    refused = opened.page.locator("#state-message.error")
    refused.wait_for(timeout=2000)
    assert "products" in refused.inner_text()  # the server's own message
    assert httpx.get(origin + "/__mock__/health").json()["counts"]["productlines"] == 9  # nothing half-applied
    opened.page.click("#state-reset")
    opened.page.locator("#counts button", has_text="productlines 8").wait_for(timeout=2000)
    opened.keep(tmp_path, "dashboard-state.png")
    assert [p for p in opened.problems if "status of 400" not in p] == []


def test_an_opened_exchange_leads_to_its_operations_prefer_headers(served: tuple[MockApp, str], opened: Opened) -> None:
    _, origin = served
    opened.live()
    httpx.get(origin + "/shop/api/v1/products/S10_1678/", headers=KEY)
    opened.page.locator("#live tbody tr", has_text="get_product").click()
    opened.page.click("#d-steer")
    statuses = opened.page.locator("#steer-statuses code")
    statuses.first.wait_for(timeout=2000)
    assert "get_product" in opened.page.locator("#operation option:checked").inner_text()
    assert "Prefer: code=404" in statuses.all_inner_texts()
    assert opened.problems == []
