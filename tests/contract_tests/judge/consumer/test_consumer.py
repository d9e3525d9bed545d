"""`shop-contract --consumer FILE`: a contract recorded from real httpx traffic on the mock, verified
against the mock itself, a variant refusing form bodies, the DRF test backend, and spec revisions."""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from contract_tests import cli
from contract_tests.judge.consumer.document import FORM_TYPES, Interaction
from contract_tests.judge.consumer.document import load as load_contract
from contract_tests.judge.consumer.revision import breaks
from contract_tests.outcome import findings_file
from contract_tests.spec import Spec
from mock_server.app import create_app
from mock_server.settings import DEFAULT_API_KEY, Settings
from shop_contract.document import bundled_spec, read
from tests.support.live import running
from tests.support.ports import free_port
from tests.support.suite import TOKEN_PATH, Outcome, credentials, shop_contract, violations
from tests.support.variants import RefusingFormBodies

API = "/shop/api/v1"
KEY = {"X-API-Key": DEFAULT_API_KEY}


def front_end_traffic(http: httpx.Client) -> None:
    """A front end's session: forms (one with an empty field), multipart, JSON, queries, a miss, no key."""
    http.get(f"{API}/productlines/", params={"page_size": 5}, headers=KEY)
    http.post(f"{API}/productlines/", data={"productline": "Kites", "textdescription": ""}, headers=KEY)
    http.get(f"{API}/productlines/Kites/", headers=KEY)
    http.patch(f"{API}/productlines/Kites/", json={"htmldescription": "<p>Kites</p>"}, headers=KEY)
    product = {
        "productcode": "S99_0001",
        "productname": "Box kite",
        "productline": "Kites",
        "productscale": "1:10",
        "productvendor": "Sky",
        "productdescription": "A kite.",
        "quantityinstock": "3",
        "buyprice": "10.50",
        "msrp": "20",
    }
    http.post(f"{API}/products/", files={name: (None, value) for name, value in product.items()}, headers=KEY)
    http.get(f"{API}/products/S99_0001/", headers=KEY)
    http.get(f"{API}/products/No_Such/", headers=KEY)
    http.delete(f"{API}/products/S99_0001/", headers=KEY)
    http.get(f"{API}/customers/", params={"page": 1}, headers=KEY)
    http.get(f"{API}/customers/")  # no credentials: refused


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The contract of `front_end_traffic`, written by `shop-mock contract`'s route."""
    path = tmp_path_factory.mktemp("consumer") / "web.json"
    with running(create_app(Settings())) as origin, httpx.Client(base_url=origin, timeout=30) as http:
        front_end_traffic(http)
        answer = http.get("/__mock__/contract", params={"name": "web"})
    path.write_bytes(answer.content)
    return path


def interactions(path: Path) -> list[Interaction]:
    return load_contract(path).interactions


def form_interactions(path: Path) -> set[str]:
    return {i.name for i in interactions(path) if i.media_type in FORM_TYPES}


def verify(contract: Path, origin: str, tmp_path: Path, *args: str) -> Outcome:
    base = ["--consumer", str(contract), "--base-url", f"{origin}{API}", "--api-key", DEFAULT_API_KEY, "--quiet"]
    return shop_contract([*base, *args], tmp_path)


def test_a_contract_recorded_on_the_mock_passes_against_the_mock(recorded: Path, tmp_path: Path) -> None:
    with running(create_app(Settings())) as origin:
        outcome = verify(recorded, origin, tmp_path)
    assert outcome.code == 0, outcome.stdout[-4000:] + outcome.stderr
    consumer = outcome.findings["consumer"]
    assert (consumer["consumer"], consumer["against"], consumer["same_spec"]) == ("web", "backend", True)
    assert {i["name"]: i["verdict"] for i in consumer["interactions"]} == {i.name: "ok" for i in interactions(recorded)}
    assert findings_file.load(tmp_path / "findings.json")["consumer"] == consumer  # what `merge` reads back
    cases = ET.parse(tmp_path / "junit.xml").getroot().iter("testcase")
    named = {(case.get("classname"), case.get("name")) for case in cases}
    assert ("backend.create_product_line#1", "consumer_status") in named
    assert ("backend.create_product#1", "consumer_fields") in named
    assert "Consumer contract: web" in (tmp_path / "summary.txt").read_text()


def test_a_backend_refusing_form_bodies_fails_exactly_the_form_interactions(recorded: Path, tmp_path: Path) -> None:
    with running(RefusingFormBodies()) as origin:
        outcome = verify(recorded, origin, tmp_path)
    assert outcome.code == 1, outcome.stdout[-4000:] + outcome.stderr
    found = violations(outcome)
    assert (
        {v["operation"] for v in found} == form_interactions(recorded) == {"create_product_line#1", "create_product#1"}
    )
    assert {v["check"] for v in found} == {"consumer_status"}
    assert all(
        v["rule"].startswith("the backend refuses what this consumer sends: the mock answered HTTP 201") for v in found
    )
    assert all(v["response"].startswith("HTTP 415") for v in found)  # the backend's answer beside the mock's


def test_each_interaction_uses_identifiers_the_target_serves(recorded: Path, tmp_path: Path) -> None:
    """On an empty mock nothing the recording named exists: what is read or written is made by the run,
    and a list the target answers empty says which recorded fields it could not show."""
    with running(create_app(Settings(fixtures=None))) as origin:
        outcome = verify(recorded, origin, tmp_path)
        paths = [entry["path"] for entry in httpx.get(f"{origin}/__mock__/requests").json()]
    assert outcome.code == 0, outcome.stdout[-4000:] + outcome.stderr
    assert not [path for path in paths if path.endswith(("/Kites/", "/S99_0001/"))]
    skipped = {(s["operation"], s["check"]) for s in outcome.findings["not_exercised"]}
    assert ("list_customers#1", "consumer_fields") in skipped


def spec_revision(tmp_path: Path, edit: Any) -> Path:
    """The bundled spec, changed by `edit`, as a file."""
    raw = read(bundled_spec())
    edit(raw)
    path = tmp_path / "revision.yaml"
    path.write_text(yaml.safe_dump(raw), encoding="utf-8")
    return path


def without_page_size(raw: dict[str, Any]) -> None:
    operation = raw["paths"]["/productlines/"]["get"]
    operation["parameters"] = [p for p in operation["parameters"] if not p["$ref"].endswith("/page_size")]


def with_an_optional_field(raw: dict[str, Any]) -> None:
    raw["components"]["schemas"]["ProductLineRequest"]["properties"]["ribbon"] = {"type": "string", "nullable": True}


def test_a_revision_removing_a_parameter_the_consumer_uses_fails_without_a_target(
    recorded: Path, tmp_path: Path
) -> None:
    revision = spec_revision(tmp_path, without_page_size)
    outcome = shop_contract(["--consumer", str(recorded), "--spec", str(revision), "--quiet"], tmp_path / "report")
    assert outcome.code == 1, outcome.stdout + outcome.stderr
    assert [(v["operation"], v["rule"]) for v in violations(outcome)] == [
        ("list_product_lines#1", "this consumer breaks: the query parameter page_size was removed")
    ]
    assert outcome.findings["consumer"]["against"] == "spec"


def test_a_revision_adding_an_optional_field_passes(recorded: Path, tmp_path: Path) -> None:
    revision = spec_revision(tmp_path, with_an_optional_field)
    outcome = shop_contract(["--consumer", str(recorded), "--spec", str(revision), "--quiet"], tmp_path / "report")
    assert outcome.code == 0, outcome.stdout + outcome.stderr
    assert outcome.findings["consumer"]["same_spec"] is False


def edited(change: Any) -> Spec:
    raw = copy.deepcopy(read(bundled_spec()))
    change(raw)
    return Spec(raw)


def problems_of(recorded: Path, spec: Spec) -> dict[str, list[str]]:
    return {i.name: found for i in interactions(recorded) if (found := breaks(spec, i))}


def test_the_bundled_spec_breaks_nothing_it_was_recorded_with(recorded: Path) -> None:
    assert problems_of(recorded, Spec(read(bundled_spec()))) == {}


def test_a_field_that_became_required_breaks_the_consumers_that_do_not_send_it(recorded: Path) -> None:
    def require_html(raw: dict[str, Any]) -> None:
        raw["components"]["schemas"]["ProductLineRequest"]["required"].append("htmldescription")

    assert problems_of(recorded, edited(require_html)) == {
        "create_product_line#1": ["the body field htmldescription became required, and this consumer does not send it"]
    }


def test_a_narrowed_value_breaks_the_consumer_that_sent_a_wider_one(recorded: Path) -> None:
    def shorter_codes(raw: dict[str, Any]) -> None:
        raw["components"]["schemas"]["ProductRequest"]["properties"]["productcode"]["maxLength"] = 5

    found = problems_of(recorded, edited(shorter_codes))
    assert list(found) == ["create_product#1"]
    assert found["create_product#1"][0].startswith(
        "the body field productcode as this consumer sends it is no longer valid"
    )


def test_a_removed_response_field_or_operation_breaks_who_used_it(recorded: Path) -> None:
    def drop(raw: dict[str, Any]) -> None:
        del raw["components"]["schemas"]["Product"]["properties"]["msrp"]
        raw["components"]["schemas"]["Product"]["required"].remove("msrp")
        del raw["paths"]["/products/{productcode}/"]["delete"]

    found = problems_of(recorded, edited(drop))
    assert found["delete_product#1"] == ["the operation delete_product (DELETE /products/{productcode}/) was removed"]
    assert "the response field msrp of HTTP 201 was removed" in found["create_product#1"]
    assert "the response field msrp of HTTP 200 was removed" in found["get_product#1"]


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b"x" * (findings_file.schema("consumer_contract.schema.json")["x-max-bytes"] + 1), "larger than"),
        (b"[" * 100 + b"]" * 100, "nested deeper than"),
        (b'{"format": "shop-consumer-contract"', "not JSON"),
        (b"\xff\xfe", "not UTF-8"),
    ],
)
def test_a_contract_file_that_is_not_usable_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, problem: str
) -> None:
    path = tmp_path / "hostile.json"
    path.write_bytes(content)
    assert cli.main(["--consumer", str(path), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"shop-contract: error: not a usable consumer contract: {path}")
    assert problem in err and len(err.strip().splitlines()) == 1


def test_a_contract_of_another_version_is_refused(
    recorded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "v2.json"
    path.write_text(json.dumps({**json.loads(recorded.read_text()), "version": 2}))
    assert cli.main(["--consumer", str(path), "--quiet"]) == 2
    assert (
        capsys.readouterr().err
        == f"shop-contract: error: not a usable consumer contract: {path} at /version: must be 1\n"
    )


def test_a_missing_contract_file_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["--consumer", str(tmp_path / "none.json")]) == 2
    assert capsys.readouterr().err.startswith("shop-contract: error: cannot read the consumer contract")


def test_a_revision_that_is_not_valid_openapi_is_one_line_and_exit_2(
    recorded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    revision = spec_revision(tmp_path, lambda raw: raw["paths"]["/products/"]["get"].pop("responses"))
    assert cli.main(["--consumer", str(recorded), "--spec", str(revision), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "is not valid OpenAPI" in err and len(err.strip().splitlines()) == 1


def test_under_pytest_a_consumer_contract_is_its_own_checks(recorded: Path, tmp_path: Path) -> None:
    """`--shop-consumer FILE`: one test per replay check, not the whole suite's checks passing unrun."""
    with running(RefusingFormBodies()) as origin:
        target = ["--shop-base-url", f"{origin}{API}", "--shop-api-key", DEFAULT_API_KEY]
        command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rf", *target]
        done = subprocess.run(
            [*command, "--shop-consumer", str(recorded)], cwd=tmp_path, capture_output=True, text=True, timeout=120
        )
    assert done.returncode == pytest.ExitCode.TESTS_FAILED, done.stdout + done.stderr
    assert "::shop-contract::consumer_status - 1. [consumer_status]" in done.stdout
    assert re.search(r"\b1 failed, 3 passed in", done.stdout), done.stdout


def test_a_contract_naming_a_path_the_spec_lacks_is_a_violation_not_a_crash(recorded: Path, tmp_path: Path) -> None:
    document = json.loads(recorded.read_text())
    (read,) = [i for i in document["interactions"] if i["name"] == "get_product#1"]
    read["path"] = "/products/{0}/{productcode.__class__}/"  # as str.format would read it: a crash
    path = tmp_path / "odd.json"
    path.write_text(json.dumps(document))
    outcome = shop_contract(["--consumer", str(path), "--quiet"], tmp_path / "report")
    assert outcome.code == 1, outcome.stdout + outcome.stderr
    (found,) = violations(outcome)
    assert "moved from GET /products/{0}/{productcode.__class__}/" in found["rule"]
    assert found["curl"] == "recorded example: GET /products/{0}/{productcode.__class__}/"


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (["--include", "get_product"], "--include"),
        (["--shard", "1/2"], "--shard"),
        (["--strict"], "--strict / --strict-check"),
    ],
)
def test_options_of_generated_runs_are_refused_with_a_consumer_contract(
    recorded: Path, capsys: pytest.CaptureFixture[str], flags: list[str], named: str
) -> None:
    assert cli.main(["--consumer", str(recorded), *flags]) == 2
    err = capsys.readouterr().err
    assert err.startswith("shop-contract: error: not with --consumer") and err.rstrip().endswith(named)


def replayed_on_the_gateway(http: httpx.Client, origin: str, tmp_path: Path) -> Outcome:
    """The contract the mock at `origin` recorded, replayed on its own gateway with the realm's client."""
    path = tmp_path / "gateway.json"
    path.write_bytes(http.get("/__mock__/contract").content)
    args = ["--consumer", str(path), "--gateway-url", f"{origin}/customers/v1", *credentials(origin), "--quiet"]
    return shop_contract(args, tmp_path / "report")


def test_a_gateway_interaction_is_replayed_on_the_gateway_with_the_runs_token(tmp_path: Path) -> None:
    port = free_port()  # the realm's issuer names its own port
    with running(create_app(Settings(port=port)), port=port) as origin, httpx.Client(base_url=origin) as http:
        grant = {"grant_type": "client_credentials", "client_id": "shop-dev", "client_secret": "shop-dev-secret"}
        token = http.post(TOKEN_PATH, data=grant).json()["access_token"]
        assert http.get("/customers/v1/customers/", headers={"Authorization": f"Bearer {token}"}).status_code == 200
        outcome = replayed_on_the_gateway(http, origin, tmp_path)
    assert outcome.code == 0, outcome.stdout[-3000:] + outcome.stderr
    (replayed,) = outcome.findings["consumer"]["interactions"]
    assert (replayed["surface"], replayed["verdict"], replayed["status"]) == ("gateway", "ok", 200)
    assert token not in json.dumps(outcome.findings)


def test_a_conflict_the_consumer_met_is_replayed_on_an_item_that_exists(tmp_path: Path) -> None:
    with running(create_app(Settings())) as origin, httpx.Client(base_url=origin, headers=KEY) as http:
        existing = http.get(f"{API}/productlines/").json()["results"][0]["productline"]
        assert http.post(f"{API}/productlines/", json={"productline": existing}).status_code == 409
        path = tmp_path / "conflict.json"
        path.write_bytes(http.get("/__mock__/contract").content)
    with running(create_app(Settings())) as origin:
        outcome = verify(path, origin, tmp_path / "report")
    assert outcome.code == 0, outcome.stdout[-3000:] + outcome.stderr
    replayed = {i["name"]: (i["recorded_status"], i["status"]) for i in outcome.findings["consumer"]["interactions"]}
    assert replayed["create_product_line#1"] == (409, 409)


def test_an_api_key_sent_to_the_gateway_is_replayed_and_refused_there_too(tmp_path: Path) -> None:
    port = free_port()
    with running(create_app(Settings(port=port)), port=port) as origin, httpx.Client(base_url=origin) as http:
        assert http.get("/customers/v1/customers/", headers=KEY).status_code == 401  # the gateway takes bearer only
        outcome = replayed_on_the_gateway(http, origin, tmp_path)
    assert outcome.code == 0, outcome.stdout[-3000:] + outcome.stderr
    (replayed,) = outcome.findings["consumer"]["interactions"]
    assert (replayed["verdict"], replayed["recorded_status"], replayed["status"]) == ("ok", 401, 401)
