"""The browser login of tests/e2e/browser/test_realm_login.py, through nginx over two replicas on one Redis:
oidc-client-ts in headless Chromium logs in (the login page from one replica, the form posted to the
other), calls the API, refreshes and logs out, its requests landing on the replicas in turn.

Needs what tests/e2e/browser/test_realm_login.py needs, and nginx and redis-server (tests/support/zoo/round_robin.py,
tests/support/redis_server.py).
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import TOKEN_PATH
from tests.e2e.browser.test_realm_login import CALL_API, REFRESH, front_end, oidc_bundle
from tests.e2e.test_replicas_balanced import NAMES, cluster
from tests.support.live import running

pytestmark = pytest.mark.browser
__all__ = ["oidc_bundle"]  # the fixture, used by name
MARGIN = 0.003
"""Seconds between two requests at their replicas under which nginx may have had them in the other order:
it passes a request on within a millisecond or so."""


def test_a_front_end_logs_in_refreshes_and_logs_out_through_nginx_over_two_replicas(
    oidc_bundle: Path, chromium: Any, tmp_path: Path
) -> None:
    with cluster(tmp_path) as two, running(front_end(oidc_bundle, f"{two.origin}/realms/shop")) as site:
        two.replicas["one"].http.delete("/__mock__/requests")
        page = chromium.new_page()
        page.goto(f"{site}/")
        page.evaluate("() => { mgr.signinRedirect(); }")
        page.wait_for_selector("#kc-form-login")
        page.fill("#username", "shop-user")
        page.fill("#password", "shop-password")
        page.click("#kc-login")
        page.wait_for_url(f"{site}/callback.html*")
        page.wait_for_function("window.user || window.failure")
        assert page.evaluate("window.failure || null") is None
        user = page.evaluate("({token: user.access_token, refresh: user.refresh_token})")
        assert page.evaluate(CALL_API, [two.origin, user["token"]]) == [200, 200]
        renewed = page.evaluate(REFRESH)
        assert renewed[0] != user["token"] and renewed[1] != user["refresh"]
        page.evaluate("() => { mgr.signoutRedirect(); }")
        page.wait_for_selector("#bye")
        page.close()
        refresh = {"grant_type": "refresh_token", "client_id": "shop-web", "refresh_token": renewed[1]}
        after = httpx.post(f"{two.origin}{TOKEN_PATH}", data=refresh)
        assert (after.status_code, after.json()["error_description"]) == (400, "Session not active")
        entries = two.replicas["one"].http.get("/__mock__/requests").json()
    ordered = sorted(entries, key=lambda entry: entry["at"])
    steps = [(entry["method"], entry["path"], entry["replica"]) for entry in ordered]
    assert {replica for _, _, replica in steps} == set(NAMES), steps
    alone = isolated(ordered)
    assert len(alone) >= len(ordered) // 2, f"too few requests alone to tell the turns: {steps}"
    assert out_of_turn([replica for _, _, replica in steps], alone) == [], steps


def isolated(ordered: list[dict[str, Any]]) -> list[int]:
    """The positions of the journal entries (in arrival order) that no other came within MARGIN of, each
    entry's time at its replica running from arrival to answer.

    nginx passes requests on in the order they reach it, each to the next replica. Of two requests in
    flight at once (a page and its favicon), the replicas may see them in the other order, so only a
    request alone has a place in nginx's order that the journal shows."""
    times = [(entry["at"], entry["at"] + entry["duration_ms"] / 1000) for entry in ordered]
    return [
        i
        for i, (start, end) in enumerate(times)
        if all(
            other_end + MARGIN < start or other_start > end + MARGIN
            for j, (other_start, other_end) in enumerate(times)
            if j != i
        )
    ]


def out_of_turn(replicas: list[str], alone: list[int]) -> list[tuple[int, int]]:
    """Pairs of consecutive requests alone that round-robin could not have sent where they went: with
    `k` requests between them (in whatever order), they reach the same replica exactly when `k` is odd."""
    return [(i, j) for i, j in itertools.pairwise(alone) if (replicas[i] == replicas[j]) != ((j - i - 1) % 2 == 1)]
