"""The CLI against targets that set the pace (tests/contract/paced_targets.py): odd `Retry-After`
values are a default back-off, never an internal error."""

from __future__ import annotations

import email.utils
import time
from pathlib import Path

from mock_server.app import create_app
from mock_server.settings import Settings
from tests.contract.paced_targets import OddRetryAfter
from tests.contract.support import shop_contract
from tests.live import running

NARROW = ["--profile", "fast", "--include", "list_product_lines", "--include", "get_product_line", "--no-domain"]
"""A short run: two operations, the fast profile, Schemathesis only."""


def base(origin: str) -> list[str]:
    return ["--base-url", f"{origin}/shop/api/v1", "--api-key", "dev-api-key", "--seed", "3"]


def test_odd_retry_after_values_are_a_default_back_off_not_an_internal_error(tmp_path: Path) -> None:
    """Every third request refused 429 with the next odd value. Before: "²" (which `str.isdigit`
    accepts and `int` refuses) ended the run in "internal error of the suite: ValueError"."""
    past = email.utils.formatdate(time.time() - 3600, usegmt=True).encode()
    odd = ["\u00b2", "\uff11", "\u0663", "-1", "  ", "", "soon", "1.5"]  # ², fullwidth 1, Arabic-Indic 3
    app = OddRetryAfter(create_app(Settings()), [value.encode() for value in odd] + [past], every=3)
    with running(app) as origin:
        outcome = shop_contract([*base(origin), *NARROW, "--workers", "1"], tmp_path)
    assert app.sent == app.values, "every odd value was sent"
    assert outcome.code == 0, outcome.stdout[-2000:] + outcome.stderr
    assert "internal error" not in outcome.stdout + outcome.stderr
    assert outcome.findings["violations"] == [] and outcome.findings["errors"] == []
    assert (tmp_path / "findings.json").exists() and (tmp_path / "report.html").exists()
