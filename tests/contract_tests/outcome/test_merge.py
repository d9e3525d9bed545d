"""`shop-contract merge` reads only findings.json files valid against the suite's schema: a hostile or
careless file is exit 2 with one line naming the file and the field, and nothing is written.

Every case goes through the real CLI (a subprocess); the shards are written by report.py, then edited.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import json
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import pytest

from contract_tests.outcome import report
from contract_tests.outcome.findings import Key, Ledger, RunInfo, Skip, Violation
from contract_tests.outcome.findings_file import SCHEMA_NAME, schema
from tests.support.live import running
from tests.support.suite import ROOT, Outcome, credentials, shop_contract
from tests.support.variants import VARIANTS

Edit = Callable[[dict[str, Any]], None]
DEEP = 100_000


def write_shard(directory: Path, shard: str) -> Path:
    """A shard's report directory as the suite writes it: passes, a violation with setup, a skip."""
    ledger = Ledger(run=RunInfo(seed=7, profile="fast", suite_version="0", spec_version="1", shard=shard))
    ledger.run.targets["backend"] = "http://127.0.0.1:1/shop/api/v1"
    ledger.run.spent("backend", "get_product", 0.5)
    ledger.passed("backend", "get_product", "not_a_server_error", 3)
    ledger.violated(Violation("round_trip", "backend", "get_product", "rule", "curl", "HTTP 200", ("curl -X POST",)))
    ledger.skipped("backend", "get_product", "auth_matrix", "no credentials")
    report.write_files(ledger, None, directory)
    return directory / "findings.json"


def edited(path: Path, edit: Edit) -> None:
    document = json.loads(path.read_text(encoding="utf-8"))
    edit(document)
    path.write_text(json.dumps(document), encoding="utf-8")


def setting(pointer: str, value: Any) -> Edit:
    """An edit that sets the field at `pointer` (/a/b) to `value`."""
    *parents, name = pointer.strip("/").split("/")

    def edit(document: dict[str, Any]) -> None:
        node = document
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node[part]
        if isinstance(node, list):
            node[int(name)] = value
        else:
            node[name] = value

    return edit


def merged(tmp_path: Path, *directories: Path) -> Outcome:
    out = tmp_path / "out"
    return shop_contract(["merge", *map(str, directories), "--junit-xml", str(out / "j.xml")], report_dir=out)


def assert_refused(outcome: Outcome, tmp_path: Path, *words: str) -> None:
    lines = outcome.stderr.strip().splitlines()
    assert outcome.code == 2 and len(lines) == 1, outcome.stderr[-2000:]
    assert "Traceback" not in outcome.stderr and all(word in lines[0] for word in words), lines
    assert not (tmp_path / "out").exists()


def two_shards(tmp_path: Path) -> tuple[Path, Path]:
    return write_shard(tmp_path / "1", "1/2"), write_shard(tmp_path / "2", "2/2")


WRONG_TYPES = [
    ("/run/duration", "12"),
    ("/run/duration", None),
    ("/run/timings", ["backend.get_product"]),
    ("/run/timings/backend.get_product", "0.5"),
    ("/run/targets", "http://127.0.0.1:1/shop/api/v1"),
    ("/run/targets/backend", 80),
    ("/run/refused_credentials", "3"),
    ("/run/refused_credentials", 1.5),
    ("/run/refused_credentials", -1),
    ("/run/seed", "7"),
    ("/passes/0/times", "3"),
    ("/passes/0/times", True),
    ("/violations/0/setup", "curl -X POST"),
    ("/violations/0/setup/0", {"curl": 1}),
    ("/not_exercised/0/reason", 5),
    ("/errors", "one"),
    ("/aborted", 1),
    ("/run", []),
]


@pytest.mark.parametrize(("pointer", "value"), WRONG_TYPES, ids=lambda v: json.dumps(v)[:30])
def test_a_field_of_the_wrong_type_is_exit_2_naming_it(pointer: str, value: Any, tmp_path: Path) -> None:
    first, second = two_shards(tmp_path)
    edited(second, setting(pointer, value))
    assert_refused(merged(tmp_path, first.parent, second.parent), tmp_path, str(second), f"at {pointer}:")


@pytest.mark.parametrize("shard", ["2/2/9", "a/b", "5", "0/2", "-1/2", "0/0", "02/2", " 2/2", "2/2\n", 2])
def test_a_malformed_shard_is_exit_2_naming_it(shard: Any, tmp_path: Path) -> None:
    first, second = two_shards(tmp_path)
    edited(second, setting("/run/shard", shard))
    assert_refused(merged(tmp_path, first.parent, second.parent), tmp_path, str(second), "at /run/shard:")


@pytest.mark.parametrize("shard", ["3/2", "0/2", "-1/2", "0/0"])
def test_a_shard_out_of_range_beside_valid_ones_is_exit_2(shard: str, tmp_path: Path) -> None:
    first, second = two_shards(tmp_path)
    third = write_shard(tmp_path / "3", "1/2")
    edited(third, setting("/run/shard", shard))
    outcome = merged(tmp_path, first.parent, second.parent, third.parent)
    assert_refused(outcome, tmp_path, str(third), "at /run/shard:")


def test_a_shard_k_past_n_alone_is_exit_2_saying_the_rule(tmp_path: Path) -> None:
    """3/2 matches the schema's form; the rule of --shard (1 <= K <= N) refuses it."""
    first, second = two_shards(tmp_path)
    edited(second, setting("/run/shard", "3/2"))
    outcome = merged(tmp_path, first.parent, second.parent)
    assert_refused(outcome, tmp_path, str(second), "at /run/shard:", "1 <= K <= N")


@pytest.mark.parametrize(
    ("field", "words"),
    [
        ("", "at /0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0: nested deeper than 16 levels"),
        ("/run/targets", "at /run/targets/0/0/0/0/0/0/0/0/0/0/0/0/0/0: nested deeper"),
        ("/violations/0/setup", "at /violations/0/setup/0/0/0/0/0/0/0/0/0/0/0/0/0: nested deeper"),
    ],
)
def test_a_file_nested_100000_deep_is_exit_2_naming_where(field: str, words: str, tmp_path: Path) -> None:
    first, second = two_shards(tmp_path)
    deep = "[" * DEEP + "]" * DEEP
    if field:
        marker = "__deep__"
        edited(second, setting(field, marker))
        second.write_text(second.read_text(encoding="utf-8").replace(f'"{marker}"', deep), encoding="utf-8")
    else:
        second.write_text(deep, encoding="utf-8")
    assert_refused(merged(tmp_path, first.parent, second.parent), tmp_path, str(second), words)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('{"run": ', "not JSON (Expecting value, line 1 column 9)"),
        ("\udcff", "not UTF-8"),
        ('{"run": {"duration": NaN}}', "NaN is not a JSON number"),
        ('{"run": {"duration": 1e999}}', "not JSON this suite reads"),
        ('{"run": {"seed": ' + "9" * 5000 + "}}", "not JSON this suite reads"),
        ("[]", "expected object, got array"),
    ],
    ids=["truncated", "not-utf8", "nan", "infinite", "huge-integer", "array"],
)
def test_a_file_that_is_not_findings_json_is_exit_2(text: str, words: str, tmp_path: Path) -> None:
    first, second = two_shards(tmp_path)
    second.write_bytes(text.encode("utf-8", errors="surrogateescape"))
    assert_refused(merged(tmp_path, first.parent, second.parent), tmp_path, str(second), words)


def test_a_file_of_a_million_tiny_items_is_exit_2_before_it_is_parsed(tmp_path: Path) -> None:
    first, second = two_shards(tmp_path)
    items = schema()["x-max-items"]
    edited(second, setting("/errors", [""] * items))
    outcome = merged(tmp_path, first.parent, second.parent)
    assert_refused(outcome, tmp_path, str(second), "at /errors/", f"more than {items} items")


def test_an_unclosed_string_of_escaped_quotes_is_read_in_one_pass(tmp_path: Path) -> None:
    """Each quote could start a string to skip: a scanner that backtracks takes hours on this file."""
    first, second = two_shards(tmp_path)
    second.write_text('{"errors": ["' + '\\"' * 500_000, encoding="utf-8")
    outcome = shop_contract(["merge", str(first.parent), str(second.parent)], report_dir=tmp_path / "out", timeout=60)
    assert_refused(outcome, tmp_path, str(second), "not JSON")


def test_a_lone_surrogate_is_exit_2_naming_the_field(tmp_path: Path) -> None:
    """json.loads turns `\\ud800` into a str that no report file could be written with."""
    first, second = two_shards(tmp_path)
    edited(second, setting("/violations/0/response", "\ud800"))
    outcome = merged(tmp_path, first.parent, second.parent)
    assert_refused(outcome, tmp_path, str(second), "at /violations/0/response:", "not Unicode text")


def test_a_file_past_the_size_limit_is_exit_2_unread(tmp_path: Path) -> None:
    first, second = two_shards(tmp_path)
    limit = schema()["x-max-bytes"]
    with second.open("r+b") as file:
        file.truncate(limit + 1)  # sparse: costs no disk
    assert_refused(merged(tmp_path, first.parent, second.parent), tmp_path, str(second), f"larger than {limit} bytes")


@pytest.mark.parametrize(
    ("edit", "words"),
    [
        (lambda d: d["run"].pop("timings"), "at /run/timings: missing"),
        (setting("/run/coverage", 1), "at /run/coverage: not a field of findings.json"),
        (setting("/violations/0/\x1b[2J\nkey", 1), "at /violations/0/\\u001b[2J\\nkey: not a field"),
        (setting("/passes/0/times", 0), "at /passes/0/times: minimum is 1"),
        (setting("/passes/0/check", ""), "at /passes/0/check: minLength is 1"),
    ],
    ids=["missing", "unknown", "hostile-key", "zero-times", "empty-check"],
)
def test_a_field_missing_or_unknown_is_exit_2_naming_it(edit: Edit, words: str, tmp_path: Path) -> None:
    first, second = two_shards(tmp_path)
    edited(second, edit)
    assert_refused(merged(tmp_path, first.parent, second.parent), tmp_path, str(second), words)


def twice(field: str) -> Edit:
    """An edit giving the list at `field` its first item again (a violation with its script)."""

    def edit(document: dict[str, Any]) -> None:
        document[field].append(document[field][0])
        if field == "violations":
            document["scripts"].append(document["scripts"][0])

    return edit


def key_twice(document: dict[str, Any]) -> None:
    document["run"] = {"__twice__": 0, **document["run"]}  # made `"seed": 8` below, before the recorded one


@pytest.mark.parametrize(
    ("edit", "words"),
    [
        (twice("violations"), "at /violations/1/id: the same id as /violations/0/id"),
        (twice("passes"), "at /passes/1: the same check as /passes/0"),
        (key_twice, "at /run/seed: a key given twice"),
    ],
    ids=["violation-id", "passes", "json-key"],
)
def test_a_name_given_twice_is_exit_2_naming_it_for_merge_and_replay(edit: Edit, words: str, tmp_path: Path) -> None:
    """Two violations with one id were replayed as one, two passes of one check were added up, and of a key
    given twice JSON keeps the last: each without a word."""
    first, second = two_shards(tmp_path)
    edited(second, edit)
    if edit is key_twice:
        text = second.read_text(encoding="utf-8")
        second.write_text(text.replace('"__twice__": 0', '"seed": 8', 1), encoding="utf-8")
    assert_refused(merged(tmp_path, first.parent, second.parent), tmp_path, str(second), words)
    replayed = shop_contract(["replay", "--all", "--report-dir", str(second.parent)])
    assert replayed.stderr.strip().splitlines() == [f"shop-contract: error: {second} {words}"], replayed.stderr
    assert replayed.code == 2 and replayed.stdout == ""


def test_a_long_foreign_value_is_cut_in_the_error(tmp_path: Path) -> None:
    first, second = two_shards(tmp_path)
    edited(second, setting("/run/profile", "x" * 1_000_000 + "\n\x1b[2J"))
    outcome = merged(tmp_path, first.parent, second.parent)
    assert_refused(outcome, tmp_path, str(second), "at /run/profile: another run")
    assert len(outcome.stderr) < 1000


def test_an_unwritable_report_dir_is_exit_2_with_one_line(tmp_path: Path) -> None:
    first, second = two_shards(tmp_path)
    blocker = tmp_path / "file"
    blocker.write_text("", encoding="utf-8")
    outcome = shop_contract(["merge", str(first.parent), str(second.parent)], report_dir=blocker / "out")
    lines = outcome.stderr.strip().splitlines()
    assert outcome.code == 2 and len(lines) == 1 and "cannot write the merged report" in lines[0], outcome.stderr


def test_valid_shards_still_merge(tmp_path: Path) -> None:
    first, second = two_shards(tmp_path)
    outcome = merged(tmp_path, first.parent, second.parent)
    assert outcome.code == 1 and outcome.stderr == "", outcome.stderr
    assert outcome.findings["passes"][0]["times"] == 6 and outcome.findings["run"]["shards"] == 2


def test_the_schema_is_a_valid_json_schema_naming_every_field_of_the_ledger() -> None:
    """The schema and findings.py change together: a field the suite writes is a field merge reads."""
    jsonschema.Draft202012Validator.check_schema(schema())
    definitions = schema()["$defs"]
    names = {name: {f.name for f in dataclasses.fields(kind)} for name, kind in [("run", RunInfo), ("skip", Skip)]}
    assert set(definitions["run"]["properties"]) == set(definitions["run"]["required"]) == names["run"]
    assert set(definitions["skip"]["properties"]) == names["skip"]
    derived = {"id", "fingerprint"}  # outcome/fingerprint.py, written beside each violation
    assert set(definitions["violation"]["properties"]) == derived | {f.name for f in dataclasses.fields(Violation)}
    assert set(definitions["pass"]["properties"]) == {f.name for f in dataclasses.fields(Key)} | {"times"}
    assert set(schema()["properties"]) == set(report.as_json(Ledger()))


def test_the_schema_is_package_data_of_the_wheel() -> None:
    """merge reads it with importlib.resources: a wheel without it could merge nothing."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = pyproject["tool"]["setuptools"]["package-data"]["contract_tests.outcome"]
    assert any(fnmatch.fnmatch(SCHEMA_NAME, pattern) for pattern in patterns)
    assert "jsonschema" in " ".join(pyproject["project"]["dependencies"])  # the suite-only install has it


def suite_run(report_dir: Path, faults: list[dict[str, Any]]) -> Outcome:
    """A real run of the suite, on the mock that does not delete and applies the fault rules `faults`."""
    variant = next(v for v in VARIANTS if v.name == "delete_does_not_delete")
    args = ["--include", "delete_customer", "--include", "list_customers", "--include", "get_product_line"]
    args += ["--no-conformance", "--seed", "3", "--quiet", "--shard", "1/1"]
    with running(variant.build()) as origin:
        httpx.put(f"{origin}/__mock__/faults", json=faults).raise_for_status()
        return shop_contract(["--base-url", f"{origin}/shop/api/v1", *credentials(origin), *args], report_dir)


def test_what_the_suite_writes_and_merges_is_valid_against_the_schema(tmp_path: Path) -> None:
    """Real runs: one with violations and their setup, one that a dropped connection leaves with a run
    error; then a merge."""
    found = suite_run(tmp_path / "found", [])
    assert found.findings["violations"] and found.findings["passes"], found.stdout[-3000:]
    assert any(violation["setup"] for violation in found.findings["violations"])
    broken = suite_run(tmp_path / "broken", [{"operationId": "get_product_line", "fault": "drop"}])
    assert broken.code == 2 and broken.findings["errors"], broken.stdout[-3000:]
    outcome = merged(tmp_path, tmp_path / "found")
    assert outcome.code == 1, outcome.stderr
    validator = jsonschema.Draft202012Validator(schema())
    for document in (found.findings, broken.findings, outcome.findings):
        assert not list(validator.iter_errors(document))
