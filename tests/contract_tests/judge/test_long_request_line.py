"""A 414 to a request line past the length the spec admits (decision `long-request-line`) is the
server's bound, as gunicorn's 4094 bytes is, and no violation; a 414 to a shorter line is an undocumented
status. The mock behind a small ASGI layer that reads the request line as gunicorn does, over real HTTP."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from contract_tests.judge import refusals
from contract_tests.spec import Spec
from mock_server.app import create_app
from mock_server.settings import Settings
from tests.support.faults import send_answer
from tests.support.live import running
from tests.support.suite import shop_contract

LIMIT = 120
"""The test server's bound on a request line, in bytes: generated queries pass it within a fast run."""
SPEC = Path(__file__).resolve().parents[3] / "openapi" / "openapi.yaml"
PAGE = (
    b"<html><head><title>URI Too Long</title></head><body><h1><p>URI Too Long</p></h1></body></html>"  # gunicorn's page
)


class LineLimit:
    """`app` behind a bound on the request line (`METHOD target HTTP/1.1`): longer is 414, as gunicorn answers."""

    def __init__(self, app: Any, limit: int) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            query = scope["query_string"]
            target = scope["raw_path"] + (b"?" + query if query else b"")
            if len(scope["method"].encode() + b" " + target + b" HTTP/1.1") > self.limit:
                await send_answer(send, (414, {"content-type": "text/html", "connection": "close"}, PAGE))
                return
        await self.app(scope, receive, send)


def spec_admitting(length: int, tmp_path: Path) -> Path:
    """The spec with its decision `long-request-line` admitting 414 past `length` bytes."""
    document = yaml.safe_load(SPEC.read_text(encoding="utf-8"))
    (decision,) = [d for d in document["info"]["x-decisions"] if d["id"] == refusals.LONG_REQUEST_LINE]
    decision["admits"] = [length]
    path = tmp_path / "openapi.yaml"
    path.write_text(yaml.safe_dump(document, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return path


def run(tmp_path: Path, *spec: str) -> Any:
    with running(LineLimit(create_app(Settings()), LIMIT)) as origin:
        args = ["--base-url", f"{origin}/shop/api/v1", "--api-key", "dev-api-key", "--include", "list_products"]
        args += ["--no-domain", "--profile", "fast", "--seed", "3", "--quiet", *spec]
        return shop_contract(args, tmp_path / "report")


def test_a_414_past_the_admitted_length_is_the_servers_bound_not_a_violation(tmp_path: Path) -> None:
    outcome = run(tmp_path, "--spec", str(spec_admitting(LIMIT, tmp_path)))
    assert outcome.code == 0, outcome.stdout[-3000:] + outcome.stderr
    assert outcome.findings["violations"] == []
    (operation,) = outcome.findings["coverage"]["operations"]
    assert 414 in operation["statuses"]["answered"], "no request line passed the bound: the test judged nothing"


def test_a_414_to_a_shorter_line_is_an_undocumented_status(tmp_path: Path) -> None:
    outcome = run(tmp_path)  # the spec as it is: 414 admitted past 4094 bytes only
    assert outcome.code == 1, outcome.stdout[-3000:] + outcome.stderr
    flagged = {(v["check"], v["response"].partition("\n")[0]) for v in outcome.findings["violations"]}
    assert ("status_code_conformance", "HTTP 414") in flagged, flagged


@pytest.mark.parametrize(
    ("method", "uri", "status", "refused"),
    [
        ("GET", "http://h/shop/api/v1/products/?page=" + "9" * 4100, 414, True),
        ("GET", "http://h/shop/api/v1/products/?page=" + "9" * 4040, 414, False),  # 4094 bytes or fewer in all
        ("GET", "http://h/shop/api/v1/products/?page=" + "9" * 4100, 400, False),
        ("GET", "http://h/shop/api/v1/products/", 414, False),
    ],
)
def test_the_admitted_length_is_the_request_lines(method: str, uri: str, status: int, refused: bool) -> None:
    assert refusals.request_line_too_long(Spec.load(None), method, uri, status) is refused
