"""The consumer-contract loop in a real browser: a small front end in headless Chromium (another
origin: every call is cross-origin) uses the mock; its contract is recorded and verified against the
mock (passes) and against a backend refusing form bodies (fails on exactly the form interactions).

Needs Debian's `chromium` and the `playwright` package (tests/support/browser.py): without them it skips and
says why; `tox -e browser` (SHOP_BROWSER_TESTS=required) fails instead.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from mock_server.app import create_app
from mock_server.settings import DEFAULT_API_KEY, Settings
from tests.support.live import running
from tests.support.suite import shop_contract, violations
from tests.support.variants import RefusingFormBodies

pytestmark = pytest.mark.browser

API = "/shop/api/v1"
PAGE = f"""<!DOCTYPE html><meta charset="utf-8"><title>Kites admin</title><script>
window.shop = async (origin) => {{
  const api = origin + "{API}", key = {{"X-API-Key": {json.dumps(DEFAULT_API_KEY)}}}, statuses = [];
  const call = async (path, options) => {{
    const response = await fetch(api + path, {{...options, headers: {{...key, ...(options || {{}}).headers}}}});
    statuses.push(response.status);
    return response.status === 204 ? null : response.json();
  }};
  await call("/productlines/?page_size=5");
  const line_form = new URLSearchParams({{productline: "Kites", textdescription: ""}});
  await call("/productlines/", {{method: "POST", body: line_form}});
  const product = new FormData();
  for (const [name, value] of Object.entries({{productcode: "S99_0001", productname: "Box kite", productline: "Kites",
      productscale: "1:10", productvendor: "Sky", productdescription: "A kite.", quantityinstock: "3",
      buyprice: "10.50", msrp: "20"}})) product.append(name, value);
  await call("/products/", {{method: "POST", body: product}});
  const line = await call("/productlines/Kites/");
  await call("/productlines/Kites/", {{method: "PATCH", headers: {{"Content-Type": "application/json"}},
      body: JSON.stringify({{htmldescription: "<p>" + line.productline + "</p>"}})}});
  return statuses;
}};
</script><h1>Kites admin</h1>"""


def front_end() -> Starlette:
    async def index(request: Request) -> HTMLResponse:
        return HTMLResponse(PAGE)

    return Starlette(routes=[Route("/", index)])


def verify(contract: Path, origin: str, report: Path) -> Any:
    args = ["--consumer", str(contract), "--base-url", f"{origin}{API}", "--api-key", DEFAULT_API_KEY, "--quiet"]
    return shop_contract(args, report)


def test_a_browser_front_ends_contract_is_recorded_and_verified(chromium: Any, tmp_path: Path) -> None:
    contract = tmp_path / "web.json"
    with running(create_app(Settings())) as mock, running(front_end()) as site:
        page = chromium.new_page()
        page.goto(f"{site}/")
        assert page.evaluate("origin => shop(origin)", mock) == [200, 201, 201, 200, 200]
        contract.write_bytes(httpx.get(f"{mock}/__mock__/contract", params={"name": "kites-admin"}).content)
    document = json.loads(contract.read_text())
    shapes = {i["name"]: i["request"] for i in document["interactions"]}
    assert sorted(shapes) == [
        "create_product#1",
        "create_product_line#1",
        "get_product_line#1",
        "list_product_lines#1",
        "patch_product_line#1",
    ]
    assert shapes["create_product_line#1"]["empty_fields"] == ["textdescription"]
    assert shapes["create_product#1"]["media_type"] == "multipart/form-data"
    assert {u["reason"].split(" (")[0] for u in document["unrecorded"]} == {"a CORS preflight"}

    with running(create_app(Settings())) as mock:
        passed = verify(contract, mock, tmp_path / "mock")
    assert passed.code == 0, passed.stdout[-4000:] + passed.stderr
    with running(RefusingFormBodies()) as backend:
        refused = verify(contract, backend, tmp_path / "json-only")
    assert refused.code == 1, refused.stdout[-4000:] + refused.stderr
    assert {v["operation"] for v in violations(refused)} == {"create_product_line#1", "create_product#1"}

    page.goto((tmp_path / "json-only" / "report.html").as_uri())  # report.html's consumer section
    rows = {row[0]: row[1:] for row in page.eval_on_selector_all(
        "#consumer tbody tr", "rows => rows.map(r => [...r.children].map(c => c.textContent))"
    )}  # fmt: skip
    assert sorted(rows) == sorted(shapes)
    assert rows["create_product_line#1"][:3] == ["broken", "201", "415"]
    assert rows["get_product_line#1"][:3] == ["ok", "200", "200"]
