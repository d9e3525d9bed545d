"""Time to a verdict: concurrency finds what one worker finds, an overloaded target is waited for, and a
time budget ends a run with a partial verdict (client/pacing.py, run/scheduling.py)."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest

from mock_server.app import create_app
from mock_server.settings import Settings
from tests.support.jitter import jittering
from tests.support.live import running
from tests.support.suite import TOKEN_PATH, credentials, shop_contract
from tests.support.variants import VARIANTS

pytestmark = pytest.mark.e2e  # whole runs against the mock under uvicorn (tox -e e2e)

BY_NAME = {variant.name: variant for variant in VARIANTS}
WORKERS = 8


def fingerprints(origin: str, tmp_path: Path, workers: int, *args: str) -> tuple[int, set[str]]:
    """The exit code and the violations' fingerprints of a run with `workers`."""
    base = ["--base-url", f"{origin}/shop/api/v1", *credentials(origin), "--seed", "11", "--quiet"]
    outcome = shop_contract([*base, "--workers", str(workers), *args], tmp_path / f"w{workers}")
    return outcome.code, {violation["fingerprint"] for violation in outcome.findings.get("violations", [])}


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("patch_resets_other_fields", ["--no-conformance"]),
        ("stale_read_after_write", ["--no-conformance"]),
        ("product_without_msrp", ["--no-domain", "--profile", "fast", "--include", "get_product"]),
        # the default profile's coverage phase, shared by runs side by side with more than one worker
        ("product_without_msrp", ["--no-domain", "--include", "get_product", "--include", "patch_product"]),
        ("correct mock", ["--no-conformance"]),
    ],
)
def test_one_seed_finds_the_same_violations_with_one_worker_and_with_four(
    name: str, args: list[str], tmp_path: Path
) -> None:
    app = create_app(Settings()) if name == "correct mock" else BY_NAME[name].build()
    with running(app) as origin:
        alone = fingerprints(origin, tmp_path, 1, *args)
        together = fingerprints(origin, tmp_path, 4, *args)
    assert alone == together
    assert alone[0] == (0 if name == "correct mock" else 1)
    if name != "correct mock":
        assert any(f" {BY_NAME[name].check}: " in fingerprint for fingerprint in alone[1])


class Overloaded:
    """The mock, answering 503 with `Retry-After: 1` to every fifth request, `limit` times in all."""

    def __init__(self, app: Any, limit: int) -> None:
        self.app, self.limit = app, limit
        self.seen = self.refused = 0

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            self.seen += 1
            if self.seen % 5 == 0 and self.refused < self.limit:
                self.refused += 1
                headers = [(b"retry-after", b"1"), (b"content-type", b"text/plain")]
                await send({"type": "http.response.start", "status": 503, "headers": headers})
                await send({"type": "http.response.body", "body": b"busy"})
                return
        await self.app(scope, receive, send)


def test_a_target_answering_503_with_retry_after_is_waited_for_not_reported(tmp_path: Path) -> None:
    app = Overloaded(create_app(Settings()), limit=4)
    with running(app) as origin:
        base = ["--base-url", f"{origin}/shop/api/v1", "--api-key", "dev-api-key", "--seed", "3", "--quiet"]
        args = [*base, "--profile", "fast", "--include", "get_product_line", "--include", "list_product_lines"]
        outcome = shop_contract(args, tmp_path)
    assert app.refused == 4
    assert outcome.code == 0, outcome.stdout[-2000:] + outcome.stderr
    assert outcome.findings["violations"] == [] and outcome.findings["errors"] == []


class Slow:
    """The mock, each answer of its API 0.2 s late and its realm's at once: an API across a network, and
    its token endpoint (a Keycloak) next to the suite. `most` counts the API's requests in flight at once."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.in_flight = self.most = 0

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["path"].startswith("/realms/"):
            await self.app(scope, receive, send)
            return
        self.in_flight += 1
        self.most = max(self.most, self.in_flight)
        try:
            await asyncio.sleep(0.2)
            await self.app(scope, receive, send)
        finally:
            self.in_flight -= 1


def test_max_time_ends_the_run_within_the_budget_and_one_deadline_with_a_partial_verdict(tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    with running(Slow(create_app(Settings()))) as origin:
        base = ["--base-url", f"{origin}/shop/api/v1", "--api-key", "dev-api-key", "--seed", "3"]
        started = time.monotonic()
        outcome = shop_contract(
            [*base, "--max-time", "4", "--request-timeout", "2"], tmp_path, env={"GITHUB_STEP_SUMMARY": str(summary)}
        )
        elapsed = time.monotonic() - started
    assert outcome.code == 3, outcome.stdout[-2000:] + outcome.stderr
    assert outcome.stderr.strip().splitlines() == ["shop-contract: partial verdict: 1 part(s) not reached in time"] or (
        "partial verdict" in outcome.stderr and len(outcome.stderr.strip().splitlines()) == 1
    )
    # the budget, one request deadline, and a margin for what follows the last request on a loaded machine
    assert outcome.findings["run"]["duration"] <= 4 + 2 + 3
    assert elapsed < 60  # the process, start-up and reports included
    assert outcome.findings["unreached"] and outcome.findings["run"]["max_time"] == 4
    assert "Partial verdict" in outcome.stdout and "Result: partial" in outcome.stdout
    assert "partial" in summary.read_text()
    written = json.loads((tmp_path / "findings.json").read_text())
    assert written["unreached"] == outcome.findings["unreached"]


def test_a_budget_that_reaches_nothing_is_exit_2_with_one_line(tmp_path: Path) -> None:
    with running(Slow(create_app(Settings()))) as origin:
        base = ["--base-url", f"{origin}/shop/api/v1", "--api-key", "dev-api-key", "--seed", "3"]
        outcome = shop_contract([*base, "--max-time", "0.05"], tmp_path)
    assert outcome.code == 2, outcome.stdout[-2000:] + outcome.stderr
    assert len(outcome.stderr.strip().splitlines()) == 1
    assert "before anything was judged" in outcome.stderr


@pytest.mark.parametrize("value", ["0", "65", "two", "-3"])
def test_a_bad_workers_value_is_one_line_and_exit_2(value: str, tmp_path: Path) -> None:
    outcome = shop_contract(["--base-url", "http://127.0.0.1:9/", "--workers", value], None)
    assert outcome.code == 2 and len(outcome.stderr.strip().splitlines()) == 1
    assert "--workers" in outcome.stderr and "Traceback" not in outcome.stderr


class OneAtATime:
    """The mock serving one request at a time, each 0.05 s: a small server that queues (two sync workers
    of gunicorn, busy), whose answers are slow for its own work, not the network's."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.lock = asyncio.Lock()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        async with self.lock:
            await asyncio.sleep(0.05)
            await self.app(scope, receive, send)


@pytest.mark.parametrize(("target", "chosen"), [(Slow, "more than one"), (OneAtATime, "one")])
def test_workers_auto_overlaps_requests_for_a_far_target_and_not_for_one_that_queues(
    target: type, chosen: str, tmp_path: Path
) -> None:
    with running(target(create_app(Settings()))) as origin:
        base = ["--base-url", f"{origin}/shop/api/v1", "--api-key", "dev-api-key", "--seed", "3"]
        outcome = shop_contract([*base, "--workers", "auto", "--max-time", "10", "--request-timeout", "5"], tmp_path)
    assert outcome.code in (0, 1, 3), outcome.stdout[-2000:] + outcome.stderr
    workers = outcome.findings["run"]["workers"]
    assert (workers > 1) if chosen == "more than one" else (workers == 1), outcome.stdout[-2000:]
    assert "served at once" in outcome.stdout  # the probe ran: the latency alone asked for more than one


def test_a_token_endpoint_near_the_suite_does_not_hold_a_far_api_to_one_request_at_a_time(tmp_path: Path) -> None:
    """The pacer judges an answer slow against the fastest from the same origin (client/pacing.py). Judged
    against the token endpoint's few milliseconds, every answer of the API was slow, and the limit fell to
    one and stayed there: a run of five minutes took seventeen. The realm is another origin here, a relay to
    the same server, so that its tokens are the API's."""
    app = Slow(create_app(Settings()))
    with running(app) as origin, jittering(origin, most=0.0) as realm:
        args = ["--gateway-url", f"{origin}/customers/v1", "--token-url", realm + TOKEN_PATH]
        args += ["--client-id", "shop-dev", "--client-secret", "shop-dev-secret", "--no-domain", "--profile", "fast"]
        outcome = shop_contract([*args, "--workers", str(WORKERS), "--seed", "3", "--quiet"], tmp_path)
    assert outcome.code == 0, outcome.stdout[-2000:] + outcome.stderr
    assert app.most >= WORKERS - 2, f"at most {app.most} of {WORKERS} requests were in flight at once"
