"""The reports people read: the coverage figure, the short summary, report.html's data and safety, the
reproductions (run command, httpx script) and the GitHub job summary."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import httpx
import yaml
from schemathesis.core import curl as schemathesis_curl

from contract_tests.outcome import html_report, report, reproduce, step_summary
from contract_tests.outcome.coverage import Coverage, Sent, covers
from contract_tests.outcome.documented import plan
from contract_tests.outcome.findings import Ledger, RunInfo, Violation
from contract_tests.spec import Spec
from mock_server.app import create_app
from mock_server.settings import DEFAULT_API_KEY, Settings
from tests.support.live import running
from tests.support.suite import shop_contract
from tests.support.variants import VARIANTS

HOSTILE_BODY = '</script><script>window.pwned = 1</script><img src=x onerror="window.pwned = 2"> `|# **bold** [a](b)'
QUICK = ["--api-key", DEFAULT_API_KEY, "--seed", "7", "--quiet", "--profile", "fast"]


def responses(spec: Spec, operation: str) -> list[str]:
    """The statuses the contract documents for `operation` (this contract has no `default`)."""
    return list(spec.operations[operation].definition["responses"])


def ledger_with(violations: list[Violation], spec: Spec | None = None) -> Ledger:
    ledger = Ledger(run=RunInfo(seed=1, targets={"backend": "http://127.0.0.1:9/shop/api/v1"}, profile="fast"))
    if spec is not None:
        plan(ledger.coverage, spec, "backend", ["get_product"])
    for violation in violations:
        ledger.violated(violation)
    return ledger


def hostile_violation() -> Violation:
    curl = "curl -X GET -H 'X-API-Key: [Filtered]' http://127.0.0.1:9/shop/api/v1/products/S10_1678/"
    return Violation(
        "response_schema_conformance",
        "backend",
        "get_product",
        f"rule {HOSTILE_BODY}",
        curl,
        f"HTTP 200\n\n{HOSTILE_BODY}",
    )


def test_an_include_of_one_operation_covers_exactly_the_statuses_it_was_answered(tmp_path: Path) -> None:
    with running(create_app(Settings(journal_size=5000))) as origin:
        outcome = shop_contract(["--base-url", f"{origin}/shop/api/v1", *QUICK, "--include", "get_product"], tmp_path)
        journal = httpx.get(f"{origin}/__mock__/requests", params={"limit": 5000}, headers={"X-API-Key": "dev-api-key"})
    assert outcome.code == 0, outcome.stdout[-3000:] + outcome.stderr
    answered = {entry["status"] for entry in journal.json() if entry["operationId"] == "get_product"}
    others = {entry["operationId"] for entry in journal.json()} - {"get_product", None}
    coverage = outcome.findings["coverage"]
    (entry,) = coverage["operations"]  # the other operations the run called (setup, discovery) are not in scope
    assert others and (entry["surface"], entry["operation"]) == ("backend", "get_product")
    assert set(entry["statuses"]["answered"]) == answered
    documented = responses(Spec.load(), "get_product")
    assert entry["statuses"]["seen"] == [key for key in documented if int(key) in answered]
    assert entry["statuses"]["never_seen"] == [key for key in documented if int(key) not in answered]
    assert (coverage["seen_responses"], coverage["documented_responses"]) == (
        len(entry["statuses"]["seen"]),
        len(documented),
    )
    assert entry["requests"] >= len([e for e in journal.json() if e["operationId"] == "get_product"])
    assert entry["parameters"]["exercised"] == ["path:productcode"] and 0 < entry["validated"] <= entry["requests"]
    last = outcome.stdout.strip().splitlines()[-4:]
    figure = f"{coverage['seen_responses']} of {len(documented)} documented responses seen"
    assert (
        figure in last[0] and last[1] == f"Report: {tmp_path / 'report.html'}" and last[-1] == "Result: no violation."
    )


def test_the_figure_counts_documented_statuses_and_ranges_not_default_nor_other_operations() -> None:
    spec = Spec.load()
    coverage = Coverage()
    plan(coverage, spec, "backend", ["get_product", "create_product"])
    coverage.sent("backend", "get_product", 200, Sent(frozenset({"path:productcode", "query:nope"})))
    coverage.sent("backend", "get_product", 500, Sent())
    coverage.sent("backend", "list_products", 400, Sent())  # not in scope
    body = Sent(fields=frozenset({"productcode", "unknown"}), media_type="application/json; charset=utf-8")
    coverage.sent("backend", "create_product", None, body)
    seen, documented = coverage.figure()
    assert (seen, documented) == (1, len(responses(spec, "get_product")) + len(responses(spec, "create_product")))
    document = coverage.as_json()
    by_name = {entry["operation"]: entry for entry in document["operations"]}
    get, create = by_name["get_product"], by_name["create_product"]
    assert get["statuses"]["undocumented_seen"] == [500] and get["parameters"]["exercised"] == ["path:productcode"]
    assert create["body_fields"]["exercised"] == ["productcode"] and create["media_types"]["used"] == [
        "application/json"
    ]
    assert covers("4XX", 404) and not covers("4XX", 500) and not covers("404", 400)
    assert Coverage.from_json(document).as_json() == document


def test_merged_coverage_adds_the_shards_observations() -> None:
    spec = Spec.load()
    first, second = Coverage(), Coverage()
    for part, status in ((first, 200), (second, 404)):
        plan(part, spec, "backend", ["get_product"])
        part.sent("backend", "get_product", status, Sent())
        part.judged("backend", "get_product")
    first.add(Coverage.from_json(second.as_json()))
    (entry,) = first.as_json()["operations"]
    assert entry["statuses"]["seen"] == ["200", "404"] and (entry["requests"], entry["validated"]) == (2, 2)


def test_the_short_summary_ends_with_one_line_per_violated_operation_and_check() -> None:
    broken = [
        Violation("status_code_conformance", "backend", "create_product_line", "rule A\nmore", "curl a", "HTTP 200"),
        Violation("status_code_conformance", "backend", "create_product_line", "rule B", "curl b", "HTTP 200"),
        Violation("pagination_page", "gateway", "list_customers", "x" * 300, "curl c", "HTTP 200"),
    ]
    ledger = ledger_with(broken, Spec.load())
    short = report.summary(ledger, verbose=False, html=Path("out/report.html")).splitlines()
    assert short[-7:] == [
        "Violated (surface, operation, [check], violations, first rule broken):",
        f"  backend  {'create_product_line':<28} {'[status_code_conformance]':<34}    2  rule A",
        f"  gateway  {'list_customers':<28} {'[pagination_page]':<34}    1  {'x' * 99}…",
        f"Coverage of the contract: 0 of {len(responses(Spec.load(), 'get_product'))} documented responses seen (0.0%)",
        "Report: out/report.html",
        "",
        "Result: 3 violation(s) of 2 check(s).",
    ]
    assert "curl a" not in "\n".join(short)
    full = report.summary(ledger, verbose=True)
    assert "rule broken: rule A" in full and "curl b" in full and full.endswith(short[-1])


def test_the_page_holds_findings_json_masked_and_a_hostile_body_cannot_act_in_it() -> None:
    secret = "s3cret-api-key"
    echoed = Violation("not_a_server_error", "backend", "get_product", "rule", "curl x", f"HTTP 500\n\nkey={secret}")
    ledger = ledger_with([hostile_violation(), echoed], Spec.load())
    ledger.secrets = (secret,)
    document = report.as_json(ledger)
    page = html_report.render(document)
    assert "</script><script>" not in page and "<img" not in page
    assert secret not in page and "key=[masked]" in page  # masked as in the other reports
    (blob,) = re.findall(r'<script type="application/json" id="findings">(.*?)</script>', page, re.DOTALL)
    assert json.loads(blob) == json.loads(json.dumps(document))
    assert "http://" not in page.replace(document["run"]["targets"]["backend"], "").split("<script>", 1)[0].replace(
        "http://www.w3.org/2000/svg", ""
    )


def test_a_violations_httpx_script_sends_what_its_curl_sends() -> None:
    body = '{"productline": "it\'s", "n": 1}'
    headers = {"X-API-Key": "[Filtered]", "Content-Type": "application/json"}
    curl = schemathesis_curl.generate(
        method="POST", url="http://h/p/", body=body, verify=True, headers=headers, known_generated_headers=None
    ).command
    assert reproduce.parse_curl(curl) == ("POST", "http://h/p/", list(headers.items()), body)
    script = reproduce.httpx_script(curl)
    assert script.startswith("# [Filtered]") and "content=" in script
    compile(script, "<script>", "exec")
    assert reproduce.httpx_script("curl -X GET $'http://h/\\x01'").startswith("# This request cannot be shown")


def test_the_script_of_a_real_violation_reproduces_it_and_the_job_summary_shows_it(tmp_path: Path) -> None:
    variant = next(v for v in VARIANTS if v.name == "product_without_msrp")
    with running(variant.build()) as origin:
        args = ["--base-url", f"{origin}/shop/api/v1", *QUICK, "--no-domain", "--include", "get_product"]
        job_summary = tmp_path / "job-summary.md"
        outcome = shop_contract(args, tmp_path, env={step_summary.VARIABLE: str(job_summary)})
        script = outcome.findings["scripts"][0]["request"].replace("[Filtered]", DEFAULT_API_KEY)
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=30, check=False)
    assert outcome.code == 1 and outcome.findings["violations"][0]["check"] == "response_schema_conformance"
    status, body = done.stdout.split("\n", 1)
    assert status.startswith("200 application/json") and "productcode" in body and "msrp" not in body
    assert outcome.findings["run"]["command"].startswith(f"shop-contract --base-url {origin}/shop/api/v1 --api-key")
    assert DEFAULT_API_KEY not in outcome.findings["run"]["command"]
    shown = job_summary.read_text(encoding="utf-8")
    assert (
        shown.startswith("### shop-contract: ❌") and "\n```sh\ncurl -X GET" in shown and DEFAULT_API_KEY not in shown
    )


def test_the_github_job_summary_is_appended_with_the_target_kept_from_acting_as_markdown(tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n", encoding="utf-8")
    ledger = ledger_with([hostile_violation()], Spec.load())
    step_summary.append(ledger, {step_summary.VARIABLE: str(summary)})
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("earlier step\n### shop-contract: ❌ 1 violation(s) of 1 check(s)")
    documented = len(responses(Spec.load(), "get_product"))
    assert f"Coverage of the contract: 0 of {documented} documented responses seen \\(0\\.0%\\)" in text
    shown = next(line for line in text.splitlines() if line.startswith("**1\\. ")).split("**: ", 1)[1]
    assert re.search(r"(?<!\\)[<>`*\[|#]", shown) is None  # the target's text: every special character escaped
    assert "\\<img" in text and "\\*\\*bold\\*\\*" in text
    assert "\n```sh\ncurl -X GET -H 'X-API-Key: [Filtered]'" in text
    assert step_summary.fenced("a ``` b").startswith("````sh\n")
    step_summary.append(ledger, {})  # unset: nothing written, nothing raised
    assert summary.read_text(encoding="utf-8") == text


def test_the_ci_examples_upload_report_html_and_link_it_in_the_job_summary() -> None:
    """The merged report of a sharded run is uploaded even after violations and linked in the job's summary;
    a single run goes through the suite's action, which uploads its report directory the same way."""
    root = Path(__file__).resolve().parents[3]
    steps = yaml.safe_load((root / "examples/github-actions/contract-sharded.yml").read_text(encoding="utf-8"))
    merge = steps["jobs"]["merge"]["steps"]
    upload = next(step for step in merge if step.get("with", {}).get("path") == "contract-report/report.html")
    assert upload["uses"].startswith("actions/upload-artifact@") and "cancelled()" in upload["if"]
    link = f"steps.{upload['id']}.outputs.artifact-url"
    linked = [step for step in merge if "GITHUB_STEP_SUMMARY" in step.get("run", "")]
    assert any(link in str(step.get("env", {})) + step["run"] for step in linked)
    action = yaml.safe_load((root / "action.yml").read_text(encoding="utf-8"))["runs"]["steps"]
    kept = next(step for step in action if str(step.get("uses", "")).startswith("actions/upload-artifact@"))
    assert kept["with"]["path"] == "${{ inputs.report-dir }}" and "cancelled()" in kept["if"]
    single = yaml.safe_load((root / "examples/github-actions/contract.yml").read_text(encoding="utf-8"))
    assert any("shop-contract-suite@" in str(step.get("uses", "")) for step in single["jobs"]["contract"]["steps"])
