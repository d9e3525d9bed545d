"""Debian's Chromium and Firefox ESR, headless, driven by Playwright: what every browser test (marker
`browser`) starts from.

Chromium is driven over the DevTools protocol; Firefox ESR over WebDriver BiDi (Playwright's
`moz-firefox` channel with the system's executable: no browser is downloaded). Without a browser or
playwright a browser test skips and says why; where the browser tests are required (`tox -e browser`
sets SHOP_BROWSER_TESTS=required) it fails instead: CI never passes by skipping them.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, NoReturn

import pytest

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]
# Firefox reads the system's dark or light setting from this preference (1 dark, 0 light).
FIREFOX_DARK = "ui.systemUsesDarkTheme"


def unavailable(reason: str) -> NoReturn:
    """Skip, saying why; fail where the browser tests are required (tox -e browser)."""
    if os.environ.get("SHOP_BROWSER_TESTS") == "required":
        pytest.fail(f"browser test required but cannot run: {reason}")
    pytest.skip(reason)


def sync_playwright() -> Any:
    """Playwright's sync entry point, or the reason it is missing."""
    try:
        from playwright.sync_api import sync_playwright as start
    except ImportError:
        unavailable("the playwright package is not installed (pip install playwright)")
    return start()


def launched_chromium() -> Iterator[Any]:
    """The browser for one test module (the `chromium` fixture in tests/conftest.py)."""
    executable = shutil.which("chromium") or shutil.which("chromium-browser")
    if executable is None:
        unavailable("chromium is not installed (apt-get install chromium)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def firefox_options(prefs: Mapping[str, object] | None = None) -> dict[str, Any]:
    """`BrowserType.launch` options for Debian's firefox-esr over WebDriver BiDi, with `prefs` set."""
    executable = shutil.which("firefox-esr") or shutil.which("firefox")
    if executable is None:
        unavailable("firefox-esr is not installed (apt-get install firefox-esr)")
    return {"channel": "moz-firefox", "executable_path": executable, "headless": True, "firefox_user_prefs": prefs}


def launched_firefox() -> Iterator[Any]:
    """Firefox ESR for one test module (the `browser` fixture's second engine in tests/conftest.py)."""
    options = firefox_options()
    with sync_playwright() as playwright:
        browser = playwright.firefox.launch(**options)
        try:
            yield browser
        finally:
            browser.close()


ENGINES: dict[str, Callable[[], Iterator[Any]]] = {"chromium": launched_chromium, "firefox": launched_firefox}


def is_firefox(browser: Any) -> bool:
    return bool(browser.browser_type.name == "firefox")


@contextlib.contextmanager
def firefox_beside(browser: Any, prefs: Mapping[str, object] | None = None, **options: Any) -> Iterator[Any]:
    """A second Firefox from `browser`'s Playwright, launched with `prefs` and `options`: for what a
    context cannot set over BiDi."""
    other = browser.browser_type.launch(**firefox_options(prefs), **options)
    try:
        yield other
    finally:
        other.close()


@contextlib.contextmanager
def in_scheme(browser: Any, scheme: str) -> Iterator[tuple[Any, dict[str, Any]]]:
    """A browser whose system is set to `scheme` ("light" or "dark"), and the context options saying it.

    Chromium: Playwright's emulation (`color_scheme`). Firefox: Playwright 1.64 ignores `color_scheme`
    over BiDi (1.65 sends `emulation.setMediaFeaturesOverride`, which Firefox 153 does not know), so a
    Firefox launched with the system setting's own preference.
    """
    if not is_firefox(browser):
        yield browser, {"color_scheme": scheme}
        return
    with firefox_beside(browser, {FIREFOX_DARK: int(scheme == "dark")}) as other:
        yield other, {}


@contextlib.contextmanager
def downloading_to(browser: Any, directory: Path) -> Iterator[Any]:
    """`browser`, or for Firefox a second one whose downloads land in `directory` (see `downloaded`)."""
    if not is_firefox(browser):
        yield browser
        return
    with firefox_beside(browser, downloads_path=str(directory)) as other:
        yield other


def downloaded(page: Any, selector: str, directory: Path, name: str) -> Path:
    """The file that clicking `selector` downloads, as `directory`/`name` (the name the page gives it),
    in a browser from `downloading_to`.

    Firefox 153 announces a download (`browsingContext.downloadWillBegin`) with `navigation: null` and
    no `download` id, which Playwright 1.64 drops: no download event comes, so the file is read where
    Firefox writes it, once written (it puts an empty file there first and fills `NAME.part`).
    """
    landed = directory / name
    if not is_firefox(page.context.browser):
        with page.expect_download() as info:
            page.click(selector)
        assert info.value.suggested_filename == name
        info.value.save_as(landed)
        return landed
    page.click(selector)
    deadline = time.monotonic() + 5
    while not landed.exists() or landed.stat().st_size == 0 or landed.with_name(name + ".part").exists():
        assert time.monotonic() < deadline, f"no {name} was downloaded to {directory}"
        time.sleep(0.05)
    return landed


def kept_screenshot(page: Any, tmp_path: Path, name: str, *, full_page: bool = False) -> Path:
    """A screenshot of `page` in the test's tmp dir, copied to SHOP_REPORT_ARTIFACTS when that names a
    directory (CI keeps it as an artifact)."""
    shot = tmp_path / name
    page.screenshot(path=str(shot), full_page=full_page)
    artifacts = os.environ.get("SHOP_REPORT_ARTIFACTS")
    if artifacts:
        Path(artifacts).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(artifacts) / name)
    return shot


def clipboard_readable(context: Any, origin: str) -> None:
    """Let pages of `origin` in `context` read back what they copied (`navigator.clipboard.readText`).

    Chromium asks for the permissions; Firefox lets a page read what its own origin wrote, and its
    WebDriver BiDi knows no `clipboard-read` permission to grant.
    """
    if not is_firefox(context.browser):
        context.grant_permissions(["clipboard-read", "clipboard-write"], origin=origin)
