"""The CLI's contract with its callers: exit 0 / 1 / 2, one line on stderr when it cannot run, reports written."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest

from mock_server.app import create_app
from mock_server.settings import Settings
from tests.contract.support import TOKEN_PATH, credentials, shop_contract
from tests.contract.variants import VARIANTS
from tests.live import free_port, running

QUICK = ["--include", "list_product_lines", "--no-conformance", "--seed", "3", "--quiet"]


@pytest.fixture(scope="module")
def origin() -> Iterator[str]:
    with running(create_app(Settings())) as served:
        yield served


def assert_cannot_run(args: list[str], words: str) -> None:
    outcome = shop_contract(args)
    assert outcome.code == 2
    lines = outcome.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0] and "Traceback" not in outcome.stderr, outcome.stderr


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
        outcome = shop_contract(["--base-url", f"{served}/shop/api/v1", *credentials(served), *QUICK], tmp_path)
    assert outcome.code == 1
    assert (
        "[pagination_walk]" in outcome.stdout and "curl -X GET" in outcome.stdout and "rule broken:" in outcome.stdout
    )
    failures = list(ET.parse(tmp_path / "junit.xml").getroot().iter("failure"))
    assert failures and all("pagination_walk" in (failure.text or "") for failure in failures)


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
