"""No false report on a conforming backend that refuses like Django REST Framework does.

DRF answers 400, not 409, for a duplicate identifier (its unique validator) and for a body that
renames the item in its path; the contract accepts both refusals. A mock rewritten to answer that
way must pass the default suite.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mock_server.app import create_app
from mock_server.settings import Settings
from tests.support.live import running
from tests.support.suite import credentials, shop_contract, violations

pytestmark = pytest.mark.drf  # a whole run against a DRF-like mock (tox -e drf)

WRITES = {"POST", "PUT", "PATCH"}


class ConflictsAsBadRequests:
    """Turns every 409 to a write into DRF's 400 with a field-keyed body."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] not in WRITES:
            await self.app(scope, receive, send)
            return
        rewriting = False

        async def rewrite(message: dict[str, Any]) -> None:
            nonlocal rewriting
            if message["type"] == "http.response.start" and message["status"] == 409:
                rewriting = True
                body = json.dumps({"non_field_errors": ["already exists"]}).encode()
                headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
                await send({"type": "http.response.start", "status": 400, "headers": headers})
                await send({"type": "http.response.body", "body": body})
            elif not rewriting:
                await send(message)

        await self.app(scope, receive, rewrite)


def test_duplicates_and_renames_refused_with_400_pass_by_default_not_strictly(tmp_path: Path) -> None:
    with running(ConflictsAsBadRequests(create_app(Settings()))) as origin:
        args = ["--base-url", f"{origin}/shop/api/v1", *credentials(origin), "--profile", "fast", "--seed", "9"]
        lenient = shop_contract([*args, "--quiet"], tmp_path / "lenient")
        strict = shop_contract([*args, "--quiet", "--strict-check", "duplicate_is_conflict"], tmp_path / "strict")
    assert violations(lenient) == [], lenient.stdout[-6000:] + lenient.stderr
    assert "duplicate_rejected" in lenient.findings["exercised"]
    assert strict.code == 1
    assert {violation["check"] for violation in violations(strict)} == {"duplicate_is_conflict"}


def test_a_rename_refused_with_400_passes_by_default_and_strictly_is_reported(tmp_path: Path) -> None:
    with running(ConflictsAsBadRequests(create_app(Settings()))) as origin:
        args = ["--base-url", f"{origin}/shop/api/v1", *credentials(origin), "--no-conformance", "--seed", "9"]
        args += ["--include", "update_customer", "--include", "patch_customer", "--quiet"]
        lenient = shop_contract(args, tmp_path / "lenient")
        strict = shop_contract([*args, "--strict-check", "identifier_change_is_conflict"], tmp_path / "strict")
    assert lenient.code == 0, lenient.stdout[-6000:] + lenient.stderr
    assert "identifier_immutable" in lenient.findings["exercised"]
    assert {violation["check"] for violation in strict.findings["violations"]} == {"identifier_change_is_conflict"}
