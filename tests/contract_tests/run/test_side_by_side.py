"""The domain tests side by side: a piece that judges by a collection's count runs with no other writer.

`identifier_addressable` judges a refused create by its collection's count, which must not change. With
several workers, the other domain tests create and delete items of the same collections at the same
time, unless the test is in `runner.ALONE`. It was not, and a correct Django REST Framework backend, which
refuses an identifier with "/", got "the create of an identifier with a slash answered 400, yet count
went 115 → 114" behind 50-150 ms per answer with 16 workers: another piece had deleted its own product.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
from pathlib import Path
from typing import Any

import pytest

from contract_tests.spec import Spec
from mock_server.app import create_app
from mock_server.settings import Settings
from mock_server.spec.schemas import server_path
from tests.support.faults import send_answer, whole_body, with_body
from tests.support.live import running
from tests.support.suite import credentials, shop_contract, violations

pytestmark = pytest.mark.e2e  # a whole run of the domain tests against a real server (tox -e e2e)

SLUG = re.compile(r"[A-Za-z0-9_~-]+")
"""Letters, digits, "_", "-" and the "~" of the suite's fresh identifiers (contract_tests/identities.py)."""
WORKERS = 8


class RefusesIdentifiersButSlugs:
    """ASGI: the mock, except that a create whose string identifier is not a slug is refused with a 400
    naming the field, as DRF's slug fields refuse it, and nothing is stored. Each answer is held 5 to 25 ms,
    so that the workers' requests overlap as they do across a network. The identifiers and the create
    paths are the spec's."""

    def __init__(self, app: Any, spec: Spec) -> None:
        self.app = app
        prefix = server_path(spec.raw["servers"][0])
        self.identifiers = {
            prefix + collection.create.path: collection.identifier
            for collection in spec.collections
            if collection.request_schema["properties"][collection.identifier].get("type") == "string"
        }
        self.random = random.Random(1)
        self.refused = 0

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        await asyncio.sleep(self.random.uniform(0.005, 0.025))
        field = self.identifiers.get(scope["path"]) if scope["method"] == "POST" else None
        if field is None:
            await self.app(scope, receive, send)
            return
        body = await whole_body(receive)
        try:
            value = json.loads(body).get(field)
        except (ValueError, AttributeError):
            value = None
        if isinstance(value, str) and not SLUG.fullmatch(value):
            self.refused += 1
            answer = json.dumps({field: ["Enter a valid slug."]}).encode()
            await send_answer(send, (400, {"content-type": "application/json"}, answer))
            return
        await self.app(*with_body(scope, body), send)


def test_a_target_refusing_identifiers_gets_no_report_from_the_domain_tests_side_by_side(tmp_path: Path) -> None:
    """Every domain test on several workers against the mock refusing every identifier but a slug: each
    refused create of `identifier_addressable` (a dozen per string-keyed collection) is judged by a count
    that no other piece changes meanwhile, so nothing is reported."""
    app = RefusesIdentifiersButSlugs(create_app(Settings()), Spec.load())
    with running(app) as origin:
        args = ["--base-url", f"{origin}/shop/api/v1", *credentials(origin), "--no-conformance"]
        args += ["--profile", "fast", "--seed", "3", "--workers", str(WORKERS), "--quiet"]
        outcome = shop_contract(args, tmp_path)
    assert outcome.findings["run"]["workers"] == WORKERS
    assert app.refused >= 2 * 12, "too few refused creates to judge by a count"
    assert "identifier_addressable" in outcome.findings["exercised"]
    assert violations(outcome) == [], outcome.stdout[-6000:] + outcome.stderr
    assert outcome.code == 0, outcome.stderr
