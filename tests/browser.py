"""Debian's Chromium, headless, driven by Playwright: what every browser test (marker `browser`) starts from.

Without chromium or playwright a browser test skips and says why; where the browser tests are required
(`tox -e browser` sets SHOP_BROWSER_TESTS=required) it fails instead: CI never passes by skipping them.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn

import pytest

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]


def unavailable(reason: str) -> NoReturn:
    """Skip, saying why; fail where the browser tests are required (tox -e browser)."""
    if os.environ.get("SHOP_BROWSER_TESTS") == "required":
        pytest.fail(f"browser test required but cannot run: {reason}")
    pytest.skip(reason)


def launched_chromium() -> Iterator[Any]:
    """The browser for one test module (the `chromium` fixture in tests/conftest.py)."""
    executable = shutil.which("chromium") or shutil.which("chromium-browser")
    if executable is None:
        unavailable("chromium is not installed (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        unavailable("the playwright package is not installed (pip install playwright)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


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
