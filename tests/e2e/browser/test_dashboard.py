"""The dashboard in real browsers, on a mock served by real uvicorn: each test runs in Debian's Chromium
and in its Firefox ESR (over WebDriver BiDi), the test id naming the engine (the `browser` fixture).

Without a browser or playwright the tests skip and say why; in `tox -e browser` (SHOP_BROWSER_TESTS=
required) they fail instead. Screenshots stay in each test's tmp dir, and are copied to
SHOP_REPORT_ARTIFACTS when it names a directory (CI uploads it).
"""

from __future__ import annotations

import base64
import hashlib
import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from mock_server.app import MockApp, create_app
from mock_server.settings import DEFAULT_API_KEY, Settings
from mock_server.spec.schemas import load_spec, mount_points
from mock_server.surfaces import operation_index
from tests.support.browser import clipboard_readable, downloaded, downloading_to, in_scheme, kept_screenshot
from tests.support.live import running
from tests.support.variants import VARIANTS

pytestmark = pytest.mark.browser

UI = "/__mock__/ui/"
ACTION_MS = 5000  # waiting for an action's outcome (a call and a render): no timing claim, room for a loaded CI machine
KEY = {"X-API-Key": DEFAULT_API_KEY}
HOSTILE = "<img src=x onerror=window.pwned=1>"
LINES = "/shop/api/v1/productlines/"
SPEC = load_spec()
OPERATIONS = {
    operation.operation_id: operation for _, operation in operation_index(SPEC, *mount_points(SPEC)).operations
}
# The live table's rows, newest first, each as its cells read: (method, path, operation, status, session).
CHOSEN = ("#f-method", "#f-status")  # the live table's filters chosen in a list; the others are typed
ROWS = "[...document.querySelectorAll('#live tbody tr')].map(r => [1, 2, 3, 4, 6].map(n => r.cells[n].textContent))"


# Playwright's screenshot in Firefox first adds `<style>body {}</style>` (to sync animations); the page's
# Content-Security-Policy refuses it, rightly, and Firefox reports that, naming the style's hash: the
# tool's report, not the page's.
SCREENSHOT_STYLE = base64.b64encode(hashlib.sha256(b"body {}").digest()).decode()


class Opened:
    """The dashboard opened in a fresh browser context, with what it logged and any dialog it raised."""

    def __init__(self, browser: Any, origin: str, path: str = UI, **context: Any) -> None:
        self.context = browser.new_context(viewport={"width": 1300, "height": 850}, **context)
        self.page = self.context.new_page()
        self.problems: list[str] = []
        self.page.on("console", lambda m: self.problem(m.text) if m.type in ("error", "warning") else None)
        self.page.on("pageerror", lambda error: self.problem(str(error)))
        self.page.on("dialog", lambda dialog: (self.problems.append(f"dialog {dialog.message}"), dialog.dismiss()))
        self.engine = browser.browser_type.name
        self.response = self.page.goto(origin + path)

    def problem(self, text: str) -> None:
        if SCREENSHOT_STYLE not in text:
            self.problems.append(text)

    def live(self) -> None:
        self.page.wait_for_selector("#status.live", timeout=5000)

    def tab(self, name: str) -> None:
        self.page.click(f"#tab-{name}")

    def focused(self, selector: str) -> str | None:
        """The focused element's data-id ("" if none) when it matches `selector` and shows its focus
        (`:focus-visible`); None when the focus is elsewhere."""
        found: str | None = self.page.evaluate(
            "selector => { const e = document.activeElement;"
            " return e.matches(selector) && e.matches(':focus-visible') ? e.dataset.id || '' : null }",
            selector,
        )
        return found

    def tab_to(self, selector: str, key: str) -> str:
        """Press `key` (Tab or Shift+Tab) until the focus is on `selector`, within 30 presses."""
        for _ in range(30):
            self.page.keyboard.press(key)
            found = self.focused(selector)
            if found is not None:
                return found
        raise AssertionError(f"{key} never reached {selector}")

    def looks(self, locator: Any, around: int = 0) -> bytes:
        """How `locator`'s box and `around` pixels about it look (a screenshot): to tell whether its focus
        shows. A focus outline drawn outside the box (the page's is 1px off it) needs `around` 3 or more."""
        box = locator.bounding_box()
        clip = {"x": box["x"] - around, "y": box["y"] - around}
        shot: bytes = self.page.screenshot(
            clip={**clip, "width": box["width"] + 2 * around, "height": box["height"] + 2 * around}
        )
        return shot

    def keep(self, tmp_path: Path, name: str) -> Path:
        """A screenshot kept as an artifact, its name saying the engine (dashboard-requests-firefox.png)."""
        stem, suffix = name.rsplit(".", 1)
        return kept_screenshot(self.page, tmp_path, f"{stem}-{self.engine}.{suffix}")

    def rows(self) -> list[tuple[str, ...]]:
        """The live table's rows, newest first: (method, path, operation, status, session) as shown."""
        return [tuple(cells) for cells in self.page.evaluate(ROWS)]

    def filter(self, selector: str, value: str) -> None:
        """Set the live table's filter `selector` to `value` ("" clears it), as a user does."""
        if selector in CHOSEN:
            self.page.select_option(selector, value)
        else:
            self.page.fill(selector, value)

    def eventually(self, read: Callable[[], object], expected: object, what: str) -> None:
        """Wait (ACTION_MS at most) until `read()` gives `expected`; fail saying what `what` gave instead."""
        deadline = time.monotonic() + ACTION_MS / 1000
        while (seen := read()) != expected:
            assert time.monotonic() < deadline, f"{what} gives {seen!r}, not {expected!r}"
            time.sleep(0.05)

    def says(self, selector: str, text: str) -> None:
        """Wait until `selector`'s text is exactly `text`."""
        self.eventually(lambda: self.page.text_content(selector), text, selector)

    def copied(self, button: Any, header: str) -> str:
        """`header` (the text the page shows beside `button`), once clicking `button` put it on the
        system's clipboard (read back: fails if it never holds it). The clipboard is read only after the
        page said "copied": Firefox asks the user before a page reads what another origin wrote."""
        button.click()
        self.says("#steering-message", "copied")
        self.eventually(lambda: self.page.evaluate("navigator.clipboard.readText()"), header, "the clipboard")
        return header

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def served() -> Iterator[tuple[MockApp, str]]:
    app = create_app(Settings())
    with running(app) as origin:
        yield app, origin


@pytest.fixture
def opened(browser: Any, served: tuple[MockApp, str]) -> Iterator[Opened]:
    page = Opened(browser, served[1])
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


def test_the_filters_show_exactly_the_matching_rows_and_clearing_one_brings_the_rest_back(
    served: tuple[MockApp, str], opened: Opened, tmp_path: Path
) -> None:
    _, origin = served
    opened.live()
    with httpx.Client(base_url=origin, headers=KEY) as http:
        assert http.get("/shop/api/v1/products/S10_1678/").status_code == 200
        assert http.post(LINES, json={"productline": "Rockets"}).status_code == 201
        lost = http.get(LINES + HOSTILE + "/")
        assert lost.status_code == 404
        assert http.get(LINES, headers={"X-Mock-Session": "bob"}).status_code == 200
    opened.page.locator("#live tbody tr", has_text="bob").wait_for(timeout=ACTION_MS)
    everything = opened.rows()
    assert [(method, status) for method, _, _, status, _ in everything] == [
        ("GET", "200"),
        ("GET", "404"),
        ("POST", "201"),
        ("GET", "200"),
    ]
    listed, missing, created, product = everything
    assert missing[1] == lost.request.url.raw_path.decode()  # as sent: the journal's path, shown as text
    filters = [
        ("#f-method", "POST", [created]),
        ("#f-method", "GET", [listed, missing, product]),
        ("#f-path", "/products/", [product]),  # a path
        ("#f-path", "create_product_line", [created]),  # an operationId
        ("#f-path", "Product_Line", [listed, missing, created]),  # a part of one, in any case
        ("#f-path", HOSTILE, [missing]),  # hostile text, matched as text (the path decoded)
        ("#f-path", "%3Cimg", [missing]),  # the path as sent
        ("#f-status", "2", [listed, created, product]),
        ("#f-status", "4", [missing]),
        ("#f-status", "5", []),
        ("#f-status", "none", []),
        ("#f-session", "bob", [listed]),
        ("#f-session", "alice", []),
    ]
    for selector, value, matching in filters:
        opened.filter(selector, value)
        assert opened.rows() == matching, f"{selector} {value!r}"
        opened.filter(selector, "")
        assert opened.rows() == everything, f"{selector} cleared"
    opened.filter("#f-method", "GET")  # filters add up
    opened.filter("#f-status", "2")
    assert opened.rows() == [listed, product]
    opened.says("#shown", "2 of the last 4 exchanges shown")
    opened.filter("#f-path", HOSTILE)
    assert opened.rows() == []
    assert opened.page.locator("img").count() == 0 and opened.page.evaluate("window.pwned") is None
    opened.keep(tmp_path, "dashboard-filters.png")
    assert opened.problems == []


def test_the_table_keeps_the_last_n_exchanges_the_newest_even_under_a_filter(
    served: tuple[MockApp, str], opened: Opened
) -> None:
    _, origin = served
    opened.live()
    keep: int = opened.page.evaluate("KEEP")  # the page's own bound
    opened.filter("#f-method", "POST")
    assert httpx.post(origin + LINES, json={"productline": "Rockets"}, headers=KEY).status_code == 201
    opened.page.locator("#live tbody tr", has_text="create_product_line").wait_for(timeout=ACTION_MS)
    total = keep + 20
    with httpx.Client(base_url=origin, headers=KEY) as http:
        for n in range(total):
            assert http.get(f"{LINES}line-{n}/").status_code == 404
    # the POST is no longer among the last N: a filter shows none of what the page no longer keeps
    opened.says("#shown", f"0 of the last {keep} exchanges shown")
    assert opened.rows() == []
    opened.filter("#f-method", "")
    opened.page.locator("#live tbody tr", has_text=f"line-{total - 1}/").wait_for(timeout=ACTION_MS)
    paths = [path for _, path, _, _, _ in opened.rows()]
    assert paths == [f"{LINES}line-{n}/" for n in reversed(range(total - keep, total))]
    assert opened.problems == []


def test_rules_typed_while_the_tab_loads_them_stay_and_reload_shows_the_servers(
    served: tuple[MockApp, str], opened: Opened
) -> None:
    """The faults tab's rules come from the server after it opens. Typing before they came (a slow
    answer: the page's request held here until the typing is done) must not be overwritten by them; the
    Reload button shows the server's rules whatever was typed."""
    held: list[Any] = []
    opened.live()
    opened.page.route("**/__mock__/faults", lambda route: held.append(route))
    opened.tab("faults")
    typed = '[{"operationId": "get_product", "fault": "status", "status": 503}]'
    opened.page.fill("#rules", typed)
    deadline = time.monotonic() + ACTION_MS / 1000
    while not held and time.monotonic() < deadline:
        opened.page.wait_for_timeout(50)
    assert held, "the tab did not ask the server for its rules"
    held[0].continue_()
    opened.page.unroute("**/__mock__/faults")
    opened.page.wait_for_timeout(500)  # the held answer arrived and was handled: the typing stays
    assert opened.page.input_value("#rules") == typed
    opened.page.click("#faults-reload")
    deadline = time.monotonic() + ACTION_MS / 1000  # polled here: the page's policy refuses a script to evaluate
    while opened.page.input_value("#rules").strip() != "[]" and time.monotonic() < deadline:
        opened.page.wait_for_timeout(50)
    assert opened.page.input_value("#rules").strip() == "[]"
    assert opened.problems == []


def test_a_fault_rule_entered_in_the_page_applies_to_the_next_request(
    served: tuple[MockApp, str], opened: Opened, tmp_path: Path
) -> None:
    _, origin = served
    opened.live()
    opened.tab("faults")
    # The server's rules (none) shown first, as a user sees them before editing; typing while they load is
    # the test above's. Typed at once, the refusal did not show within ACTION_MS in 1 run of this file in 5
    # on a loaded machine (what the page showed then was not recorded).
    opened.eventually(lambda: opened.page.input_value("#rules").strip(), "[]", "#rules")
    opened.page.fill("#rules", '[{"operationId": "get_product", "fault": "explode"}]')
    opened.page.click("#faults-save")
    refused = opened.page.locator("#faults-message.error", has_text="Fault rules not installed")  # the server's word
    refused.wait_for(timeout=ACTION_MS)
    assert "explode" in refused.inner_text()
    opened.page.fill("#rules", '[{"operationId": "get_product", "fault": "status", "status": 503}]')
    opened.page.click("#faults-save")
    opened.page.locator("#faults-message", has_text="rules installed").wait_for(timeout=ACTION_MS)
    assert httpx.get(origin + "/shop/api/v1/products/S10_1678/", headers=KEY).status_code == 503
    opened.keep(tmp_path, "dashboard-faults.png")
    opened.tab("requests")
    opened.page.locator("#live tbody tr", has_text="503").click()
    assert json.loads(opened.page.inner_text("#d-fault"))["fault"] == "status"  # the fault applied, shown
    opened.tab("faults")
    opened.page.click("#faults-clear")
    opened.page.locator("#faults-message", has_text="rules cleared").wait_for(timeout=ACTION_MS)
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
    opened.page.locator("#sessions-message", has_text="session alice reset").wait_for(timeout=ACTION_MS)
    assert httpx.get(origin + LINES + "Rockets/", headers=session).status_code == 404
    opened.keep(tmp_path, "dashboard-sessions.png")
    for name in ("state", "steering"):
        opened.tab(name)
        opened.page.wait_for_timeout(200)
        opened.keep(tmp_path, f"dashboard-{name}.png")
    assert opened.problems == []


def test_sessions_made_by_requests_are_listed_and_one_deleted_from_the_page_is_gone(
    served: tuple[MockApp, str], opened: Opened, tmp_path: Path
) -> None:
    _, origin = served
    opened.live()
    opened.tab("sessions")
    empty = opened.page.locator("#sessions").get_by_text("no session yet")  # the page says the list is empty
    empty.wait_for(timeout=ACTION_MS)
    with httpx.Client(base_url=origin, headers=KEY) as http:
        assert http.post(LINES, json={"productline": "Rockets"}, headers={"X-Mock-Session": "carol"}).status_code == 201
        assert http.get(LINES, headers={"X-Mock-Session": "dave"}).status_code == 200
        opened.page.click("#sessions-reload")
        names = opened.page.locator("#session-list tbody tr[data-session]")
        names.nth(1).wait_for(timeout=ACTION_MS)
        assert empty.count() == 0  # nor says so any more
        listed = http.get("/__mock__/sessions").json()
        assert [(s["name"], str(s["size"])) for s in listed] == [
            (row.get_attribute("data-session"), row.locator("td").nth(3).inner_text()) for row in names.all()
        ]
        assert {s["name"] for s in listed} == {"carol", "dave"}
        opened.page.click('button[aria-label="Delete session carol"]')
        opened.says("#sessions-message", "session carol deleted")
        opened.page.locator('#session-list tr[data-session="carol"]').wait_for(state="detached", timeout=ACTION_MS)
        assert [s["name"] for s in http.get("/__mock__/sessions").json()] == ["dave"]  # the admin API agrees
        assert http.delete("/__mock__/sessions/dave").status_code == 204  # gone behind the page's back
        refused = http.delete("/__mock__/sessions/dave").json()["detail"]
        opened.page.click('button[aria-label="Delete session dave"]')
        opened.says("#sessions-message", refused)  # the server's word, kept though the list is now empty
        assert opened.page.locator("#sessions-message.error").count() == 1
        empty.wait_for(timeout=ACTION_MS)
        assert http.get(LINES + "Rockets/", headers={"X-Mock-Session": "carol"}).status_code == 404  # afresh
    opened.keep(tmp_path, "dashboard-sessions-deleted.png")
    assert [p for p in opened.problems if "status of 404" not in p] == []  # the refused DELETE is logged by Chromium


def test_fault_rules_the_server_refuses_show_its_message_and_change_nothing_and_clear_removes_all(
    served: tuple[MockApp, str], opened: Opened, tmp_path: Path
) -> None:
    _, origin = served
    rule = [{"operationId": "get_product", "fault": "status", "status": 503}]
    with httpx.Client(base_url=origin, headers=KEY) as http:
        assert http.put("/__mock__/faults", json=rule).status_code == 204
        installed = http.get("/__mock__/faults").json()
        opened.live()
        opened.tab("faults")
        opened.eventually(lambda: bool(opened.page.input_value("#rules")), True, "#rules")
        assert json.loads(opened.page.input_value("#rules")) == installed
        for refused in (
            '[{"operationId": "get_product", ',
            '[{"operationId": "get_product", "fault": "status", "status": 99}]',
        ):
            detail = http.put("/__mock__/faults", content=refused).json()["detail"]  # what the server says of it
            opened.page.fill("#rules", refused)
            opened.page.click("#faults-save")
            opened.says("#faults-message", detail)
            assert opened.page.locator("#faults-message.error").count() == 1
            assert opened.page.input_value("#rules") == refused  # kept, to be corrected
            assert http.get("/__mock__/faults").json() == installed  # nothing changed
            assert http.get("/shop/api/v1/products/S10_1678/").status_code == 503
        opened.keep(tmp_path, "dashboard-faults-refused.png")
        opened.page.click("#faults-clear")
        opened.says("#faults-message", "rules cleared")
        assert http.get("/__mock__/faults").json() == []
        assert json.loads(opened.page.input_value("#rules")) == []
        assert http.get("/shop/api/v1/products/S10_1678/").status_code == 200
    assert [p for p in opened.problems if "status of 400" not in p] == []  # the refused PUTs are logged by Chromium


def test_the_page_is_refused_from_a_foreign_origin_and_a_rebound_host(
    browser: Any, served: tuple[MockApp, str], tmp_path: Path
) -> None:
    app, origin = served
    with running(create_app(Settings())) as other:  # a page of another origin
        foreign = Opened(browser, other)
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
    # a name rebound to the mock's address (the browser sends Host: rebound.test), through a proxy: a page
    # there (the landing page answers any name) cannot read the dashboard, and the browser opening the
    # dashboard there is shown why (as text: Firefox shows no application/problem+json error)
    rebound = Opened(browser, "http://rebound.test", path="/", proxy={"server": origin})
    try:
        assert rebound.response is not None and rebound.response.status == 200
        status, detail = rebound.page.evaluate(
            "url => fetch(url).then(async r => [r.status, (await r.json()).detail])", UI
        )
        assert status == 403 and "own address" in detail
        opened = rebound.page.goto("http://rebound.test" + UI)
        assert opened is not None and opened.status == 403
        assert "own address (Host header)" in rebound.page.locator("body").inner_text()
    finally:
        rebound.close()


def test_with_a_token_the_page_asks_for_it_and_sends_it_as_a_header(browser: Any, tmp_path: Path) -> None:
    app = create_app(Settings(admin_token="dash-token"))
    with running(app) as origin:
        opened = Opened(browser, origin)
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
            opened.page.locator("#live tbody tr", has_text="get_product").wait_for(timeout=ACTION_MS)
            assert all("dash-token" not in url for url, _ in seen)
            assert "Bearer dash-token" in [header for _, header in seen]
            opened.keep(tmp_path, "dashboard-token.png")
        finally:
            opened.close()


def test_the_page_follows_the_systems_dark_or_light_setting(browser: Any, served: tuple[MockApp, str]) -> None:
    backgrounds = {}
    for scheme in ("light", "dark"):
        with in_scheme(browser, scheme) as (set_so, options):
            opened = Opened(set_so, served[1], **options)
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
    opened.page.locator("#counts button", has_text="productlines 9").wait_for(timeout=ACTION_MS)
    opened.page.fill("#state-search", "rockets")
    assert opened.page.locator("#items tbody tr").count() == 1
    assert "(1 items)" in opened.page.inner_text("#state-page")
    bad = {"name": "bad.json", "mimeType": "application/json", "buffer": b'{"products": 1}'}
    opened.page.set_input_files("#state-import", files=[bad])
    refused = opened.page.locator("#state-message.error")
    refused.wait_for(timeout=ACTION_MS)
    assert "products" in refused.inner_text()  # the server's own message
    assert httpx.get(origin + "/__mock__/health").json()["counts"]["productlines"] == 9  # nothing half-applied
    opened.page.click("#state-reset")
    opened.page.locator("#counts button", has_text="productlines 8").wait_for(timeout=ACTION_MS)
    opened.keep(tmp_path, "dashboard-state.png")
    assert [p for p in opened.problems if "status of 400" not in p] == []


def test_an_opened_exchange_leads_to_its_operations_prefer_headers_and_one_copied_steers_as_shown(
    served: tuple[MockApp, str], opened: Opened
) -> None:
    _, origin = served
    clipboard_readable(opened.context, origin)
    opened.live()
    url = origin + LINES + "Classic Cars/"
    assert httpx.get(url, headers=KEY).status_code == 200
    opened.page.locator("#live tbody tr", has_text="get_product_line").click()
    opened.page.click("#d-steer")
    statuses = opened.page.locator("#steer-statuses li")
    statuses.first.wait_for(timeout=ACTION_MS)
    assert "get_product_line" in opened.page.locator("#operation option:checked").inner_text()
    operation = OPERATIONS["get_product_line"]  # the spec's: its declared statuses and named examples
    assert statuses.locator("code").all_inner_texts() == [f"Prefer: code={code}" for code in operation.declared()]
    examples = {
        name: (int(status), example["value"])
        for status, response in operation.responses.items()
        for content in response.get("content", {}).values()
        for name, example in content.get("examples", {}).items()
    }
    assert examples, "the spec names no example of get_product_line to steer to"
    shown = opened.page.locator("#steer-examples li")
    assert [(item.locator("code").inner_text(), item.locator(".hint").inner_text()) for item in shown.all()] == [
        (f"Prefer: example={name}", f"status {status}") for name, (status, _) in examples.items()
    ]

    def sent(header: str) -> httpx.Response:
        name, _, value = header.partition(": ")
        answer = httpx.get(url, headers={**KEY, name: value})
        assert answer.headers.get("preference-applied") == value, header
        return answer

    example = opened.copied(shown.last.locator("button"), shown.last.locator("code").inner_text())
    steered = sent(example)  # the example named, with the status shown beside it, not Classic Cars
    assert (steered.status_code, steered.json()) == examples[example.partition("example=")[2]]
    status = opened.copied(statuses.last.locator("button"), statuses.last.locator("code").inner_text())
    assert f"Prefer: code={sent(status).status_code}" == status
    assert opened.problems == []


def test_the_live_table_an_exchange_and_the_tabs_are_reached_with_the_keyboard_and_focus_shows(
    served: tuple[MockApp, str], opened: Opened, tmp_path: Path
) -> None:
    _, origin = served
    opened.live()
    for path in ("/shop/api/v1/products/S10_1678/", "/shop/api/v1/products/"):
        assert httpx.get(origin + path, headers=KEY).status_code == 200
    rows = opened.page.locator("#live tbody tr")
    rows.nth(1).wait_for(timeout=ACTION_MS)
    tab = opened.page.locator("#tab-requests")
    unfocused = {"row": opened.looks(rows.first), "tab": opened.looks(tab, around=4)}
    assert opened.tab_to("#live tbody tr", key="Tab") == rows.first.get_attribute("data-id")  # the newest
    assert opened.looks(rows.first) != unfocused["row"]  # the focused row shows it, within the row
    opened.page.keyboard.press("ArrowDown")
    assert opened.focused("#live tbody tr") == rows.nth(1).get_attribute("data-id")
    opened.page.keyboard.press("Enter")
    assert opened.focused("#detail") is not None  # the exchange opened, and took the focus
    assert opened.page.inner_text("#d-title") == "GET /shop/api/v1/products/S10_1678/"
    opened.tab_to("#tab-requests", key="Shift+Tab")
    assert opened.looks(tab, around=4) != unfocused["tab"]
    opened.page.keyboard.press("ArrowRight")  # the ARIA tabs pattern: arrows move, and show the panel
    assert opened.focused("#tab-state") is not None
    assert opened.page.get_attribute("#tab-state", "aria-selected") == "true"
    assert opened.page.is_visible("#state") and opened.page.is_hidden("#requests")
    opened.page.locator("#counts button", has_text="productlines 8").wait_for(timeout=ACTION_MS)
    opened.page.keyboard.press("ArrowLeft")
    assert opened.focused("#tab-requests") is not None and opened.page.is_visible("#requests")
    opened.keep(tmp_path, "dashboard-keyboard.png")
    assert opened.problems == []


def test_the_state_exported_from_the_page_is_the_admin_apis_and_imports_back(
    browser: Any, served: tuple[MockApp, str], tmp_path: Path
) -> None:
    _, origin = served
    assert httpx.post(origin + LINES, json={"productline": "Rockets"}, headers=KEY).status_code == 201
    state = httpx.get(origin + "/__mock__/state").json()
    with downloading_to(browser, tmp_path / "downloads") as exporting:
        opened = Opened(exporting, origin, accept_downloads=True)
        try:
            opened.live()
            opened.tab("state")
            export = downloaded(opened.page, "#state-export", tmp_path / "downloads", "mock-state.json")
            assert json.loads(export.read_text()) == state
            opened.page.locator("#state-message", has_text="exported").wait_for(timeout=ACTION_MS)
            assert httpx.post(origin + "/__mock__/reset").status_code == 204  # the state moves on
            assert httpx.get(origin + LINES + "Rockets/", headers=KEY).status_code == 404
            opened.page.set_input_files("#state-import", files=[str(export)])
            opened.page.locator("#state-message", has_text="imported mock-state.json").wait_for(timeout=ACTION_MS)
            assert httpx.get(origin + "/__mock__/state").json() == state  # round trip: what was exported
            opened.page.locator("#counts button", has_text="productlines 9").wait_for(timeout=ACTION_MS)
            assert opened.problems == []
        finally:
            opened.close()


def test_an_exchange_through_the_proxy_shows_the_backends_spec_violations(browser: Any, tmp_path: Path) -> None:
    broken = next(variant for variant in VARIANTS if variant.name == "product_without_msrp")
    with running(broken.build()) as backend, running(create_app(Settings(proxy=backend))) as front:
        opened = Opened(browser, front)
        try:
            opened.live()
            answer = httpx.get(front + "/shop/api/v1/products/S10_1678/", headers=KEY)
            assert answer.status_code == 200 and "msrp" not in answer.json()  # the backend's answer, passed on
            opened.page.locator("#live tbody tr", has_text="get_product").click()
            violations = opened.page.locator("#d-violations li")
            violations.first.wait_for(timeout=ACTION_MS)
            assert opened.page.is_visible("#d-violations-box")
            assert [text.split(":")[0] for text in violations.all_inner_texts()] == ["response"]
            assert "msrp" in violations.first.inner_text()
            opened.keep(tmp_path, "dashboard-violations.png")
            assert opened.problems == []
        finally:
            opened.close()


def test_the_page_shows_disconnected_when_the_mock_stops(browser: Any) -> None:
    """The mock, stopping, ends the page's stream cleanly (mock_server/http/stopping.py): the page says
    its stream ended, not that the network failed (its retries, a second later, do)."""
    from mock_server.http.limits import Limits, uvicorn_options

    with running(create_app(Settings()), **uvicorn_options(Limits())) as origin:
        opened = Opened(browser, origin)
        opened.live()
        opened.page.evaluate(
            "() => { const status = document.getElementById('status'); window.said = [];"
            " new MutationObserver(() => said.push(status.textContent))"
            ".observe(status, {childList: true, characterData: true, subtree: true}); }"
        )
    try:  # stopped: `running` waited for the server to finish, which the open stream held before
        opened.page.wait_for_function("() => window.said.length > 0", timeout=ACTION_MS)
        first = opened.page.evaluate("() => window.said[0]")
        assert first.startswith("disconnected (the mock ended the stream"), first
    finally:
        opened.close()
