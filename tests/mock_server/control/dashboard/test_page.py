"""The dashboard's page and steering help, without a browser: linked from `/`, shipped in the package,
locked down by its Content-Security-Policy, and its steering help read from the spec."""

from __future__ import annotations

import re
from importlib import resources

from starlette.testclient import TestClient

from mock_server.spec.schemas import load_spec

UI = "/__mock__/ui/"


def test_the_landing_page_links_the_dashboard(client: TestClient) -> None:
    assert f'href="{UI}"' in client.get("/").text


def test_the_page_loads_only_its_own_files_which_ship_in_the_package(client: TestClient) -> None:
    page = client.get(UI)
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    policy = page.headers["content-security-policy"]
    assert "default-src 'none'" in policy and "script-src 'self'" in policy and "connect-src 'self'" in policy
    static = resources.files("mock_server.control.dashboard") / "static"
    assert page.content == (static / "index.html").read_bytes()
    for name in re.findall(r'(?:src|href)="([^":]+)"', page.text):
        if name != "/":
            loaded = client.get(UI + name)
            assert loaded.status_code == 200 and loaded.content == (static / name).read_bytes(), name
    assert client.get("/__mock__/ui", follow_redirects=False).headers["location"] == UI


def test_the_script_never_parses_markup() -> None:
    """Every value a peer sent goes in as text: the script has no markup sink at all."""
    script = (resources.files("mock_server.control.dashboard") / "static" / "dashboard.js").read_text()
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"):
        assert sink not in script, sink


def test_the_steering_help_is_each_operations_declared_statuses_and_examples(client: TestClient) -> None:
    spec = load_spec()
    helped = {(o["operationId"], o["surface"]): o for o in client.get(f"{UI}operations").json()}
    for path, item in spec["paths"].items():
        for method, operation in item.items():
            if not isinstance(operation, dict) or "operationId" not in operation:
                continue
            shown = helped[(operation["operationId"], "backend")]
            assert (shown["method"], shown["path"]) == (method.upper(), path)
            codes = sorted(int(code) for code in operation["responses"] if code.isdecimal())
            assert [s["header"] for s in shown["statuses"]] == [f"Prefer: code={code}" for code in codes]
    examples = [e for o in helped.values() for e in o["examples"]]
    assert examples, "the spec names examples: the help must show them"
    for example in examples:
        assert example["header"] == f"Prefer: example={example['name']}"


def test_a_browser_refused_the_page_reads_why_as_text_and_an_api_client_as_a_problem(client: TestClient) -> None:
    """Firefox shows a problem+json refusal of a page it opened as a network error: a browser opening
    the page (it asks for HTML) gets the same reason as plain text; every other caller the Problem."""
    rebound = {"Host": "rebound.example:8000"}
    opened = client.get(UI, headers={**rebound, "Accept": "text/html,application/xhtml+xml,*/*;q=0.8"})
    assert opened.status_code == 403 and opened.headers["content-type"] == "text/plain; charset=utf-8"
    assert opened.text == "403 Forbidden: The admin API answers only on the mock's own address (Host header).\n"
    foreign = client.get(UI, headers={"Origin": "http://evil.example", "Accept": "text/html"})
    assert foreign.status_code == 403 and "other origins" in foreign.text
    assert foreign.headers["content-type"] == "text/plain; charset=utf-8"
    fetched = client.get(UI, headers={**rebound, "Accept": "application/json"})
    assert fetched.status_code == 403 and fetched.headers["content-type"] == "application/problem+json"
    data = client.get("/__mock__/state", headers={**rebound, "Accept": "text/html"})
    assert data.headers["content-type"] == "application/problem+json"  # the API itself: always the Problem
