"""The CLI's contract with its callers: exit 0 / 1 / 2, one line on stderr when it cannot run, reports written."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest

from contract_tests import SUITE_VERSION, cli
from contract_tests.run import runner
from contract_tests.spec import Spec
from mock_server.app import create_app
from mock_server.settings import Settings
from tests.shop_contract.test_urls import UNUSABLE
from tests.support.hostile_files import laughs
from tests.support.live import running
from tests.support.ports import free_port
from tests.support.suite import TOKEN_PATH, Outcome, credentials, shop_contract
from tests.support.variants import VARIANTS

QUICK = ["--include", "list_product_lines", "--no-conformance", "--seed", "3", "--quiet"]


@pytest.fixture(scope="module")
def origin() -> Iterator[str]:
    with running(create_app(Settings())) as served:
        yield served


def assert_cannot_run(args: list[str], words: str) -> Outcome:
    outcome = shop_contract(args)
    assert outcome.code == 2
    lines = outcome.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0] and "Traceback" not in outcome.stderr, outcome.stderr
    return outcome


def test_clean_run_exits_0_and_writes_junit(origin: str, tmp_path: Path) -> None:
    junit = tmp_path / "ci" / "junit.xml"
    outcome = shop_contract(
        ["--base-url", f"{origin}/shop/api/v1", *credentials(origin), *QUICK, "--junit-xml", str(junit)]
    )
    assert outcome.code == 0, outcome.stdout
    suite = ET.parse(junit).getroot()
    assert suite.tag == "testsuite" and int(suite.get("tests", "0")) > 0 and suite.get("failures") == "0"


def test_violations_exit_1_with_curl_and_rule(tmp_path: Path) -> None:
    variant = next(v for v in VARIANTS if v.name == "count_off_by_one")
    with running(variant.build()) as served:
        args = ["--base-url", f"{served}/shop/api/v1", *credentials(served), *QUICK, "--verbose"]
        outcome = shop_contract(args, tmp_path)
    assert outcome.code == 1
    assert (
        "[pagination_walk]" in outcome.stdout and "curl -X GET" in outcome.stdout and "rule broken:" in outcome.stdout
    )
    failures = list(ET.parse(tmp_path / "junit.xml").getroot().iter("failure"))
    # the count one too high: pagination_walk, and list_order (a walk returns fewer items than the count)
    assert failures and all(re.search(r"\[(pagination_walk|list_order)\]", failure.text or "") for failure in failures)
    assert any("[pagination_walk]" in (failure.text or "") for failure in failures)


def test_unreachable_target_exits_2() -> None:
    assert_cannot_run(["--base-url", f"http://127.0.0.1:{free_port()}/shop/api/v1", "--api-key", "k"], "cannot reach")


@pytest.mark.parametrize(
    ("args", "words"),
    [
        ([], "--base-url"),
        (["--base-url", "not-a-url", "--api-key", "k"], "absolute"),
        (["--base-url", "http://127.0.0.1:1/x", "--api-key", "k", "--max-examples", "0"], "--max-examples"),
        (["--base-url", "http://127.0.0.1:1/x", "--unknown-flag"], "unrecognized"),
        (["--base-url", "http://127.0.0.1:1/x", "--api-key", "k", "--include", "no_such_op"], "no_such_op"),
        (["--base-url", "http://127.0.0.1:1/x", "--api-key", "k", "--spec", "/nonexistent.yaml"], "cannot read"),
    ],
)
def test_bad_arguments_exit_2_in_one_line(args: list[str], words: str) -> None:
    assert_cannot_run(args, words)


def test_a_spec_nested_100000_deep_exits_2_in_one_line(tmp_path: Path) -> None:
    spec = tmp_path / "deep.yaml"
    spec.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    args = ["--base-url", "http://127.0.0.1:1/x", "--api-key", "k", "--spec", str(spec)]
    assert_cannot_run(args, "nested too deeply")


def openapi(**fields: object) -> str:
    """A small OpenAPI document, as JSON (which YAML reads)."""
    return json.dumps({"openapi": "3.0.3", "info": {"title": "t", "version": "1"}, **fields})


ITEM_ONLY = {
    "/x/{id}/": {
        "get": {
            "operationId": "get_x",
            "parameters": [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}],
            "responses": {"200": {"description": "ok"}},
        }
    }
}


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        (laughs(7), "its YAML aliases expand to more than"),
        (openapi(paths={}), "not a usable OpenAPI document (KeyError('servers'))"),
        (openapi(servers=[], paths={}), "not a usable OpenAPI document (IndexError"),
        (openapi(servers=[{"url": "/v1"}], paths={}), "the spec has no operation to test"),
        (openapi(servers=[{"url": "/v1"}], paths=ITEM_ONLY), "no list without path parameters on the backend"),
    ],
)
def test_a_spec_the_suite_cannot_use_exits_2_in_one_line(spec: str, words: str, tmp_path: Path) -> None:
    """Before: the aliases hung the run, and the rest was "internal error of the suite: KeyError: 'servers'"
    or "IndexError: list index out of range"."""
    (tmp_path / "spec.yaml").write_text(spec, encoding="utf-8")
    assert_cannot_run([*TARGET, "--spec", str(tmp_path / "spec.yaml")], words)


def test_refused_api_key_exits_2(origin: str) -> None:
    assert_cannot_run(["--base-url", f"{origin}/shop/api/v1", "--api-key", "wrong"], "refused")


def test_refused_client_secret_exits_2(origin: str) -> None:
    realm = ["--token-url", origin + TOKEN_PATH, "--client-id", "shop-dev", "--client-secret", "wrong"]
    assert_cannot_run(["--base-url", f"{origin}/shop/api/v1", *realm], "refused")


def test_gateway_without_token_exits_2(origin: str) -> None:
    assert_cannot_run(["--gateway-url", f"{origin}/customers/v1", "--api-key", "dev-api-key"], "bearer token")


def test_the_same_seed_gives_the_same_run(tmp_path: Path) -> None:
    """Two runs with one seed, each against a fresh mock, judge as many responses, check by check."""
    exercised = []
    for run in ("first", "second"):
        with running(create_app(Settings())) as served:
            args = ["--base-url", f"{served}/shop/api/v1", *credentials(served), "--no-domain"]
            args += ["--include", "list_products", "--include", "get_product", "--max-examples", "8"]
            outcome = shop_contract([*args, "--seed", "42", "--quiet"], tmp_path / run)
        assert outcome.code == 0, outcome.stdout[-3000:]
        summary = (tmp_path / run / "summary.txt").read_text(encoding="utf-8")
        exercised.append(summary.split("\n\n", 1)[1])  # after the run's header (duration, port)
    assert exercised[0] == exercised[1]
    assert "list_products" in exercised[0]


# The CLI's messages --------------------------------------------------------------------------------------

TARGET = ["--base-url", "http://127.0.0.1:1/shop/api/v1", "--api-key", "k"]


@pytest.mark.parametrize(
    ("args", "env"),
    [
        (["--version"], {}),
        (["--base-url", "http://127.0.0.1:1/x", "--unknown-flag"], {}),
        (["--base-url", "http://127.0.0.1:1/x"], {"SHOP_CONTRACT_TOKEN": " "}),
        (["merge", "/nonexistent-shard"], {}),
    ],
)
def test_a_forked_run_is_what_a_fresh_interpreter_runs(args: list[str], env: dict[str, str]) -> None:
    """The tests' runs are forked from a launcher with the suite imported (tests/support/launcher.py):
    the same exit, output and environment as `python -W ignore -m contract_tests`."""
    command = [sys.executable, "-W", "ignore", "-m", "contract_tests", *args]
    fresh = subprocess.run(command, capture_output=True, text=True, env={**os.environ, **env}, check=False, timeout=60)
    forked = shop_contract(args, env=env)
    assert (forked.code, forked.stdout, forked.stderr) == (fresh.returncode, fresh.stdout, fresh.stderr)


def test_version_prints_the_suite_version() -> None:
    outcome = shop_contract(["--version"])
    assert outcome.code == 0 and outcome.stdout.strip() == f"shop-contract {SUITE_VERSION}" and not outcome.stderr


@pytest.mark.parametrize(
    ("args", "words"),
    [
        ([*TARGET, "--no-domain", "--no-conformance"], "nothing to test"),
        (["--base-url", "http://127.0.0.1:1/x", "--token", ""], "--token is empty"),
        (["--base", "http://127.0.0.1:1/x", "--api-key", "k"], "unrecognized arguments: --base"),
        ([*TARGET, "--checks", "no_such_check"], "unknown check(s) for --checks: no_such_check"),
        ([*TARGET, "--exclude-checks", "nope"], "unknown check(s) for --exclude-checks: nope"),
        ([*TARGET, "--checks", "auth_matrix", "--exclude-checks", "auth_matrix"], "leave no check"),
        ([*TARGET, "--request-timeout", "0"], "--request-timeout"),
        *[([*TARGET, "--request-timeout", value], "--request-timeout must be") for value in ("nan", "inf", "1e308")],
        *[([*TARGET, "--wait", value], "--wait must be from 0 to 604800 seconds") for value in ("nan", "inf", "1e308")],
        ([*TARGET, "--max-response-size", "0"], "--max-response-size"),
        ([*TARGET, "--wait", "-1"], "--wait"),
    ],
)
def test_usage_errors_exit_2_in_one_line(args: list[str], words: str) -> None:
    assert_cannot_run(args, words)


@pytest.mark.parametrize(("url", "words"), UNUSABLE)
@pytest.mark.parametrize("flag", ["--base-url", "--gateway-url", "--token-url"])
def test_a_url_the_suite_cannot_use_is_a_usage_error_before_the_run(flag: str, url: str, words: str) -> None:
    """Each was a traceback, an "internal error of the suite" or a run against a misread target. A password in
    the URL is not echoed."""
    others = {
        "--base-url": ["--api-key", "k"],
        "--gateway-url": ["--token", "t"],
        "--token-url": ["--base-url", "http://127.0.0.1:1/x", "--client-id", "c", "--client-secret", "s"],
    }[flag]
    assert "s3cret" not in assert_cannot_run([flag, url, *others], f"{flag} {words}").stderr


@pytest.mark.parametrize("flag", ["--base-url", "--gateway-url"])
def test_a_mount_point_with_a_query_is_a_usage_error_and_a_token_url_may_hold_one(flag: str) -> None:
    others = ["--api-key", "k"] if flag == "--base-url" else ["--token", "t"]
    assert_cannot_run([flag, "http://127.0.0.1:1/x?code=k", *others], f"{flag} must not hold a query or a fragment")
    realm = ["--client-id", "c", "--client-secret", "s"]  # Azure AD B2C names its policy so: ?p=B2C_1_signin.
    token_url = f"http://127.0.0.1:{free_port()}/token?p=B2C_1_signin"
    assert_cannot_run(["--base-url", "http://127.0.0.1:1/x", "--token-url", token_url, *realm], "cannot reach")


@pytest.mark.parametrize("value", ["", "key ", " key", "a\r\nX-Injected: 1", "k\tey", "clé"])
@pytest.mark.parametrize("flag", ["--api-key", "--token"])
def test_a_credential_no_header_can_carry_is_a_usage_error_that_does_not_echo_it(flag: str, value: str) -> None:
    """Before, an empty key reached the target (its 401), and one with a line break was "cannot reach the
    backend: Illegal header value b'a\\r\\nX-Injected: 1'", the secret in the message."""
    outcome = shop_contract(["--base-url", "http://127.0.0.1:1/shop/api/v1", flag, value])
    assert outcome.code == 2
    lines = outcome.stderr.strip().splitlines()
    assert len(lines) == 1 and f"{flag} is empty" in lines[0], outcome.stderr
    assert "Injected" not in outcome.stderr and "clé" not in outcome.stderr


def test_a_report_place_that_is_none_exits_2_before_the_run(tmp_path: Path) -> None:
    a_file = tmp_path / "file"
    a_file.write_text("")
    assert_cannot_run([*TARGET, "--report-dir", str(a_file)], "--report-dir")
    assert_cannot_run([*TARGET, "--junit-xml", str(tmp_path)], "--junit-xml")
    assert_cannot_run([*TARGET, "--export-tests", str(a_file)], f"--export-tests {a_file}: not a directory")


def test_a_report_that_cannot_be_written_after_the_run_is_one_line_and_exit_2(origin: str, tmp_path: Path) -> None:
    """The run is said (its summary), and the report's failure in one line, never a traceback."""
    blocker = tmp_path / "file"
    blocker.write_text("")
    args = ["--base-url", f"{origin}/shop/api/v1", *credentials(origin), *QUICK, "--junit-xml", f"{blocker}/j.xml"]
    outcome = shop_contract(args)
    assert outcome.code == 2
    assert "Result: no violation." in outcome.stdout
    lines = outcome.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("shop-contract: error: cannot write the report: "), outcome.stderr


def test_secrets_come_from_the_environment(origin: str, tmp_path: Path) -> None:
    realm = ["--token-url", origin + TOKEN_PATH, "--client-id", "shop-dev"]
    env = {"SHOP_CONTRACT_API_KEY": "dev-api-key", "SHOP_CONTRACT_CLIENT_SECRET": "shop-dev-secret"}
    outcome = shop_contract(["--base-url", f"{origin}/shop/api/v1", *realm, *QUICK], tmp_path, env=env)
    assert outcome.code == 0, outcome.stdout[-2000:] + outcome.stderr
    written = "".join(path.read_text(encoding="utf-8") for path in tmp_path.iterdir())
    assert "dev-api-key" not in outcome.stdout + written and "shop-dev-secret" not in outcome.stdout + written


def test_an_empty_token_from_the_environment_is_a_usage_error() -> None:
    outcome = shop_contract(["--base-url", "http://127.0.0.1:1/x"], env={"SHOP_CONTRACT_TOKEN": " "})
    assert outcome.code == 2 and "--token is empty" in outcome.stderr and "cannot reach" not in outcome.stderr


def test_a_flag_wins_over_the_environment(origin: str) -> None:
    env = {"SHOP_CONTRACT_API_KEY": "wrong-key"}
    outcome = shop_contract(["--base-url", f"{origin}/shop/api/v1", "--api-key", "dev-api-key", *QUICK], env=env)
    assert outcome.code == 0, outcome.stderr


def test_wait_waits_for_a_target_still_starting(tmp_path: Path) -> None:
    port = free_port()
    origin = f"http://127.0.0.1:{port}"
    started, done = threading.Event(), threading.Event()

    def start_late() -> None:
        time.sleep(4)
        with running(create_app(Settings()), port=port):
            started.set()
            done.wait(120)

    late = threading.Thread(target=start_late, daemon=True)
    late.start()
    outcome = shop_contract(["--base-url", f"{origin}/shop/api/v1", *credentials(origin), *QUICK, "--wait", "60"])
    done.set()
    late.join(timeout=15)
    assert started.is_set() and outcome.code == 0, outcome.stderr


def test_wait_gives_up_after_its_seconds() -> None:
    started = time.monotonic()
    unreachable = ["--base-url", f"http://127.0.0.1:{free_port()}/x", "--api-key", "k"]
    assert_cannot_run([*unreachable, "--wait", "2"], "cannot reach")
    assert time.monotonic() - started >= 2


def test_the_time_budget_bounds_the_wait_for_a_target() -> None:
    """`--max-time` counts from the run's start: no probe of a target still starting is sent past it."""
    started = time.monotonic()
    unreachable = ["--base-url", f"http://127.0.0.1:{free_port()}/x", "--api-key", "k"]
    assert_cannot_run([*unreachable, "--wait", "60", "--max-time", "2"], "cannot reach")
    assert time.monotonic() - started < 30


def test_excluded_checks_are_not_judged(tmp_path: Path) -> None:
    """The variant's defect (a count one too high) is seen by pagination_walk and list_order (a walk returns
    fewer items than the count): excluding both leaves a clean run."""
    variant = next(v for v in VARIANTS if v.name == "count_off_by_one")
    with running(variant.build()) as served:
        target = ["--base-url", f"{served}/shop/api/v1", *credentials(served), *QUICK]
        excluded = shop_contract([*target, "--exclude-checks", "pagination_walk", "list_order"], tmp_path / "excluded")
        only = shop_contract([*target, "--checks", "pagination_walk"], tmp_path / "only")
    assert excluded.code == 0 and "pagination_walk" not in excluded.findings["exercised"], excluded.stdout[-2000:]
    assert only.code == 1 and set(only.findings["exercised"]) == {"pagination_walk"}


def test_reports_say_which_run_it_was(origin: str, tmp_path: Path) -> None:
    junit = tmp_path / "elsewhere" / "junit.xml"
    args = ["--base-url", f"{origin}/shop/api/v1", *credentials(origin), *QUICK, "--junit-xml", str(junit)]
    outcome = shop_contract(args, tmp_path / "reports")
    assert outcome.code == 0
    assert {p.name for p in (tmp_path / "reports").iterdir()} == {
        "summary.txt",
        "findings.json",
        "junit.xml",
        "report.html",
    }
    run = outcome.findings["run"]
    spec_version = Spec.load().raw["info"]["version"]
    assert run["seed"] == 3 and run["profile"] == "default" and run["spec_version"] == spec_version
    assert run["suite_version"] == SUITE_VERSION and run["targets"] == {"backend": f"{origin}/shop/api/v1"}
    summary = (tmp_path / "reports" / "summary.txt").read_text(encoding="utf-8")
    assert "seed 3, profile default" in summary and f"spec {spec_version}" in summary
    suite = ET.parse(junit).getroot()
    properties = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert properties["seed"] == "3" and properties["spec_version"] == spec_version
    assert all(case.get("time") is not None for case in suite.iter("testcase"))


def _boom(*args: object) -> None:
    raise RuntimeError("the suite's own defect")


@pytest.mark.parametrize("where", ["a check", "the run"])
def test_an_internal_error_exits_2_with_the_reports_written(
    where: str, origin: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """In-process, to break the suite on purpose: a crashing check, or a crash between checks."""
    if where == "a check":
        monkeypatch.setitem(runner.PER_SURFACE, "auth_matrix", _boom)
    else:
        monkeypatch.setattr(runner, "run_domain", _boom)
    args = ["--base-url", f"{origin}/shop/api/v1", *credentials(origin), *QUICK, "--report-dir", str(tmp_path)]
    code = cli.main(args)
    out, err = capsys.readouterr()
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in out + err, err
    assert {p.name for p in tmp_path.iterdir()} == {"summary.txt", "findings.json", "junit.xml", "report.html"}
    assert "the suite's own defect" in (tmp_path / "summary.txt").read_text(encoding="utf-8")
    assert list(ET.parse(tmp_path / "junit.xml").getroot().iter("error"))
