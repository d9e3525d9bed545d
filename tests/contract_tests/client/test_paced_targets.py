"""The CLI against targets that set the pace (tests/support/paced_targets.py): a throttled one gets
the workers it serves, a trickling one does not keep a run past its `--max-time`, odd `Retry-After`
values are a default back-off, never an internal error."""

from __future__ import annotations

import email.utils
import time
from pathlib import Path

from mock_server.app import create_app
from mock_server.settings import Settings
from tests.support.live import running
from tests.support.paced_targets import OddRetryAfter, Throttled, Trickling
from tests.support.suite import shop_contract

NARROW = ["--profile", "fast", "--include", "list_product_lines", "--include", "get_product_line", "--no-domain"]
"""A short run: two operations, the fast profile, Schemathesis only."""
LATE_S = 0.5
"""How long after the budget a request the suite started before it may still arrive (loopback, a loaded
machine)."""


def base(origin: str) -> list[str]:
    return ["--base-url", f"{origin}/shop/api/v1", "--api-key", "dev-api-key", "--seed", "3"]


def test_workers_auto_reads_a_throttled_target_as_serving_what_it_answered(tmp_path: Path) -> None:
    """429 past four in flight: the capacity probe counts the refusals, and the run keeps four in flight
    (before: "the capacity probe failed: ValueError", one worker, a run far longer). Every answer is as
    late, so that the batch's answers take as long as one alone: drawn at random from 50-100 ms, the
    probe's three alone came out 55 ms and its answered four 70 ms, and a loaded machine made that 2.4
    served at once. At 150 ms each, a loaded local CI run (this server and the suite under coverage) read
    "about 1.0 served at once": the answered four took 2.5 times one alone. At 300 ms the suite's and this
    server's CPU have twice the room before they look like a queue."""
    app = Throttled(create_app(Settings()), slots=4, low=0.3, high=0.3)
    with running(app) as origin:
        outcome = shop_contract([*base(origin), *NARROW, "--workers", "auto"], tmp_path)
    assert outcome.code == 0, outcome.stdout[-2000:] + outcome.stderr
    line = next(line for line in outcome.stdout.splitlines() if line.startswith("workers:"))
    assert line.startswith("workers: 4 (auto: median latency"), line
    assert "the target refused 4 of 8 sent at once with 429" in line, line
    assert outcome.findings["run"]["workers"] == 4
    assert outcome.findings["violations"] == [] and outcome.findings["errors"] == []
    # the probe's measured batch at least (its first batch, opening connections, arrives spread out and
    # is refused less): 429s the run waited out, none of them judged
    assert app.refused >= 4


def test_no_request_reaches_a_trickling_target_after_the_budget(tmp_path: Path) -> None:
    """Every answer trickles: the first three over 0.4 s, the others over 60 s (the request deadline).
    Before: the capacity probe's requests went out after the budget, and the request in flight when it
    ended ran to its own deadline, reported as the target's `response_time`: a run of 5 s ended at 18 s.
    The deadline is far past the budget so that the margin left to a loaded machine (CI's, building an
    image beside the tests, once took 2.3 s past a 4 s budget) cannot hide that defect."""
    budget = 4.0
    app = Trickling(create_app(Settings()), pauses=[0.02, 0.02, 0.02, 3.0])
    with running(app, timeout_graceful_shutdown=1) as origin:  # the cut answer trickles on at the server
        outcome = shop_contract([*base(origin), "--max-time", f"{budget:g}", "--request-timeout", "60"], tmp_path)
    first = app.arrivals[0]  # the budget started before the first request did
    late = [round(arrival - first, 2) for arrival in app.arrivals if arrival > first + budget + LATE_S]
    assert late == [], f"{len(late)} of {len(app.arrivals)} requests arrived after the budget: {late}"
    assert outcome.code in (2, 3), outcome.stdout[-2000:] + outcome.stderr
    # the request in flight was cut at the budget, not at its deadline 60 s on; then the parts not reached
    # are listed (a margin for a loaded machine)
    assert outcome.findings["run"]["duration"] <= budget + 10
    assert outcome.findings["unreached"], outcome.stdout[-2000:]
    assert "time budget" in outcome.stdout + outcome.stderr
    assert outcome.findings["violations"] == [] and outcome.findings["errors"] == []  # a cut is no response_time


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
