"""The baseline file and its matching, without a target: stable bytes, the split of a ledger, update and
prune keeping reasons, and every hostile file refused with one line naming the field."""

from __future__ import annotations

import fnmatch
import json
import subprocess
import sys
import tomllib
import xml.etree.ElementTree as ET
from datetime import date
from pathlib import Path

import jsonschema
import pytest
import yaml

from contract_tests.cli import main
from contract_tests.outcome import baseline, findings_file, html_report, report, step_summary
from contract_tests.outcome.baseline import PLACEHOLDER, BaselineError, Gate
from contract_tests.outcome.findings import Acceptance, Ledger, RunError, Violation
from contract_tests.outcome.fingerprint import fingerprint
from contract_tests.outcome.junit import junit_xml
from tests.support.suite import ROOT

TODAY = date(2026, 11, 28)
SCHEMA_RULE = "Response violates schema: 'msrp' is a required property"


def violation(operation: str, check: str = "response_schema_conformance", rule: str = SCHEMA_RULE) -> Violation:
    return Violation(check, "backend", operation, rule, f"curl http://x/{operation}/", "HTTP 200")


def ledger_of(*violations: Violation, narrowed: tuple[str, ...] = ()) -> Ledger:
    ledger = Ledger(violations=list(violations))
    ledger.run.narrowed = list(narrowed)
    return ledger


MSRP = fingerprint(violation("get_product"))
QUOTED = json.dumps(MSRP)  # YAML reads a JSON string as itself
CONTROLS = {"a tab": "\t", "a carriage return": "\r", "an escape": "\x1b", "U+2028": "\u2028"}
"""Characters the reports never leave in a fingerprint (its rule's white space is one space, the rest escaped)."""
STOCK = fingerprint(violation("list_products", rule="Response violates schema: '7' is not of type 'integer'"))


def test_the_same_entries_are_the_same_bytes_whatever_their_order(tmp_path: Path) -> None:
    entries = [
        Acceptance(STOCK, "a list: 'quoted', # not a comment\nsecond line: ünïcode", "2027-01-31"),
        Acceptance(MSRP, "legacy clients read msrp from the list"),
    ]
    path = tmp_path / "baseline.yaml"
    baseline.write(path, entries)
    written = path.read_bytes()
    assert baseline.read(path) == tuple(sorted(entries, key=lambda e: e.fingerprint))
    baseline.write(path, reversed(baseline.read(path)))
    assert path.read_bytes() == written
    assert baseline.dumps(baseline.parse(written.decode(), path)) == written.decode()
    assert "expires: 2027-01-31\n" in written.decode()  # a plain date, readable in review
    assert [p.name for p in tmp_path.iterdir()] == ["baseline.yaml"]  # no temporary file left


def test_a_live_entry_accepts_its_violations_and_only_those() -> None:
    ledger = ledger_of(violation("get_product"), violation("get_product"), violation("list_products", rule="boom"))
    baseline.apply(ledger, Path("b.yaml"), [Acceptance(MSRP, "known")], on=TODAY)
    assert [v.operation for v in ledger.violations] == ["list_products"]
    assert ledger.baseline is not None
    assert [v.operation for v in ledger.baseline.accepted] == ["get_product", "get_product"]
    assert ledger.baseline.not_reproduced == [] and ledger.baseline.expired == []


def test_an_expired_entry_accepts_nothing_and_is_listed() -> None:
    ledger = ledger_of(violation("get_product"))
    entry = Acceptance(MSRP, "until the migration", "2026-11-27")
    baseline.apply(ledger, Path("b.yaml"), [entry], on=TODAY)
    assert len(ledger.violations) == 1 and ledger.baseline is not None
    assert ledger.baseline.expired == [entry] and ledger.baseline.accepted == []
    still = ledger_of(violation("get_product"))
    baseline.apply(still, Path("b.yaml"), [entry], on=date(2026, 11, 27))  # its last day: still accepted
    assert still.violations == []


def test_an_entry_is_not_reproduced_only_after_a_complete_whole_run() -> None:
    fixed = Acceptance(STOCK, "fixed since")
    whole = ledger_of(violation("get_product"))
    baseline.apply(whole, Path("b.yaml"), [fixed, Acceptance(MSRP, "known")], strict=True, on=TODAY)
    assert whole.baseline is not None and whole.baseline.not_reproduced == [fixed]
    assert baseline.strict_failures(whole) == [f"not reproduced by this complete run: {STOCK}"]
    assert baseline.fails(whole)
    narrowed = ledger_of(violation("get_product"), narrowed=("--include",))
    incomplete = ledger_of(violation("get_product"))
    incomplete.errors.append(RunError("timeout", "backend", "schemathesis", "GET http://x/", "timed out"))
    for ledger in (narrowed, incomplete):
        baseline.apply(ledger, Path("b.yaml"), [fixed], strict=True, on=TODAY)
        assert ledger.baseline is not None and not ledger.baseline.judged
        assert ledger.baseline.not_reproduced == [] and baseline.strict_failures(ledger) == []


def test_update_adds_what_is_new_with_a_placeholder_and_keeps_every_reason(tmp_path: Path) -> None:
    path = tmp_path / "baseline.yaml"
    baseline.write(path, [Acceptance(MSRP, "legacy clients", "2027-03-01")])
    ledger = ledger_of(violation("get_product"), violation("list_products", rule="boom"))
    notes = baseline.settle(ledger, baseline.open_gate(path, update=True), on=TODAY)
    assert notes == [f"baseline {path}: added 1 entry(ies); write their reasons ({PLACEHOLDER!r})"]
    entries = {entry.fingerprint: entry for entry in baseline.read(path)}
    assert entries[MSRP] == Acceptance(MSRP, "legacy clients", "2027-03-01")
    assert entries[fingerprint(violation("list_products", rule="boom"))].reason == PLACEHOLDER
    assert ledger.violations == []  # what was just recorded is accepted


def test_prune_drops_what_did_not_reproduce_and_keeps_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "baseline.yaml"
    baseline.write(path, [Acceptance(MSRP, "legacy clients"), Acceptance(STOCK, "fixed since")])
    notes = baseline.settle(ledger_of(violation("get_product")), baseline.open_gate(path, prune=True), on=TODAY)
    assert notes == [f"baseline {path}: pruned 1 entry(ies) no longer reproduced"]
    assert baseline.read(path) == (Acceptance(MSRP, "legacy clients"),)


def test_prune_after_a_run_that_cannot_tell_leaves_the_file_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "baseline.yaml"
    baseline.write(path, [Acceptance(MSRP, "legacy clients"), Acceptance(STOCK, "fixed since")])
    before = path.read_bytes()
    incomplete = ledger_of(violation("get_product"))
    incomplete.unreached.append("backend list_products")
    with pytest.raises(BaselineError, match="not pruned: the run was not complete"):
        baseline.settle(incomplete, Gate(path, baseline.read(path), prune=True), on=TODAY)
    assert path.read_bytes() == before
    assert incomplete.violations == []  # still split by the file as it was


def test_prune_of_a_narrowed_run_is_refused_before_it_starts(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "baseline.yaml"
    baseline.write(path, [])
    args = ["--base-url", "http://127.0.0.1:9/shop/api/v1", "--baseline", str(path), "--baseline-prune"]
    assert main([*args, "--include", "get_product"]) == 2
    assert capsys.readouterr().err.strip() == (
        "shop-contract: error: --baseline-prune needs a whole run, not one narrowed by --include"
    )


HOSTILE = {
    "huge": ("accepted: []\n" + "# padding\n" * 120_000, "larger than 1048576 bytes"),
    "deep": ("accepted: " + "[" * 5000 + "]" * 5000 + "\n", "at /accepted/0/0/0: nested deeper than 4 levels"),
    "alias bomb": (
        'a: &a ["x", "x", "x", "x", "x", "x", "x", "x", "x"]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n'
        "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n",
        "at /a: an anchor or alias: a baseline is read without them",
    ),
    "python object": ("!!python/object/apply:os.system ['true']\n", "a YAML tag: a baseline is read without them"),
    "not a mapping": ("- fingerprint: x\n", "expected object, got array"),
    "empty": ("", "expected object, got null"),
    "not YAML": ("accepted: [\n", "not YAML (expected the node content, but found '<stream end>', line 2 column 1)"),
    "wrong version": ("version: 2\naccepted: []\n", "at /version: must be 1"),
    "accepted not a list": ("version: 1\naccepted: {}\n", "at /accepted: expected array, got object"),
    "reason not text": (f"version: 1\naccepted:\n- fingerprint: {QUOTED}\n  reason: 3\n", "/0/reason: expected string"),
    "no reason": (f"version: 1\naccepted:\n- fingerprint: {QUOTED}\n", "at /accepted/0/reason: missing"),
    "unknown field": (
        f"version: 1\naccepted:\n- fingerprint: {QUOTED}\n  reason: r\n  owner: me\n",
        "at /accepted/0/owner: not a field of a baseline",
    ),
    "unknown check": (
        "version: 1\naccepted:\n- fingerprint: 'backend get_product no_such_check: x'\n  reason: r\n",
        "at /accepted/0/fingerprint: names no check of the suite: no_such_check",
    ),
    "not a fingerprint": ("version: 1\naccepted:\n- fingerprint: msrp\n  reason: r\n", "fingerprint: does not match"),
    "impossible date": (
        f"version: 1\naccepted:\n- fingerprint: {QUOTED}\n  reason: r\n  expires: 2027-02-30\n",
        "at /accepted/0/expires: not a date of the calendar (YYYY-MM-DD)",
    ),
    "date of another shape": (
        f"version: 1\naccepted:\n- fingerprint: {QUOTED}\n  reason: r\n  expires: 31/01/2027\n",
        "at /accepted/0/expires: does not match",
    ),
    "a fingerprint ending in a line break": (
        f"version: 1\naccepted:\n- fingerprint: |\n    {MSRP}\n  reason: r\n",
        "at /accepted/0/fingerprint: holds a control character",
    ),
    **{
        f"a fingerprint holding {name}": (
            f"version: 1\naccepted:\n- fingerprint: {json.dumps(MSRP + character + 'x')}\n  reason: r\n",
            "at /accepted/0/fingerprint: holds a control character",
        )
        for name, character in CONTROLS.items()
    },
    "one defect twice": (
        f"version: 1\naccepted:\n- fingerprint: {QUOTED}\n  reason: r\n- fingerprint: {QUOTED}\n  reason: s\n",
        "at /accepted/1/fingerprint: the same defect as /accepted/0",
    ),
    "a key twice": ("version: 1\nversion: 1\naccepted: []\n", "at /version: a key given twice"),
    "a huge number": ("version: " + "9" * 5000 + "\naccepted: []\n", "at /version: a number of more than 100 digits"),
    "not UTF-8": ("version: 1\naccepted: []\n# \udcff\n", "not UTF-8"),
}


@pytest.mark.parametrize("case", HOSTILE, ids=str)
def test_a_hostile_baseline_is_refused_with_one_line_naming_the_field(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text, said = HOSTILE[case]
    path = tmp_path / "baseline.yaml"
    path.write_bytes(text.encode("utf-8", "surrogateescape"))
    assert main(["--base-url", "http://127.0.0.1:9/shop/api/v1", "--baseline", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith(f"shop-contract: error: --baseline {path}") and said in err, err
    assert err.count("\n") == 1 and len(err) < 400


def test_a_missing_baseline_is_refused_unless_it_is_being_recorded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--base-url", "http://127.0.0.1:9/shop/api/v1", "--baseline", str(tmp_path / "none.yaml")]
    assert main(args) == 2
    assert "cannot read it: No such file or directory (record one with --baseline-update)" in capsys.readouterr().err
    assert main([*args[:2], "--baseline-strict"]) == 2
    assert capsys.readouterr().err.strip() == "shop-contract: error: --baseline-strict need(s) --baseline FILE"


def test_every_report_shows_accepted_violations_apart() -> None:
    ledger = ledger_of(violation("get_product"), violation("list_products", rule="boom"))
    ledger.passed("backend", "get_product", "response_schema_conformance", 4)
    fixed = Acceptance(STOCK, "fixed since 2.3", "2026-01-01")
    baseline.apply(ledger, Path("b.yaml"), [Acceptance(MSRP, "legacy <clients>"), fixed], strict=True, on=TODAY)
    junit = ET.fromstring(junit_xml(ledger))
    cases = [(c.get("classname"), c.get("name"), [child.tag for child in c]) for c in junit.iter("testcase")]
    assert cases.count(("backend.get_product", "response_schema_conformance", ["skipped"])) == 1
    assert ("backend.list_products", "response_schema_conformance", ["failure"]) in cases
    assert cases.count(("baseline", STOCK, ["failure"])) == 2  # not reproduced, and expired
    assert (junit.get("tests"), junit.get("failures"), junit.get("skipped")) == ("4", "3", "1")
    text = report.summary(ledger, verbose=False)
    assert "Result: 1 new violation(s) of 1 check(s), 1 accepted by the baseline; 1 baseline entry(ies)" in text
    assert f"  {MSRP}  [1]  legacy <clients>" in text and f"  {STOCK}  (expired 2026-01-01; fixed since 2.3)" in text
    document = report.as_json(ledger)
    assert jsonschema.Draft202012Validator(findings_file.schema()).is_valid(document)
    assert [v["fingerprint"] for v in document["baseline"]["accepted"]] == [MSRP]  # type: ignore[index]
    markdown = step_summary.markdown(ledger)
    assert markdown.startswith("### shop-contract: ❌ 1 new violation(s)")
    assert "| accepted \\(1\\) |" in markdown and "legacy \\<clients\\>" in markdown
    page = html_report.render(document)
    assert "<title>shop-contract: new violations found; 1 accepted by the baseline</title>" in page


def test_a_bad_baseline_is_a_usage_error_under_pytest(tmp_path: Path) -> None:
    path = tmp_path / "baseline.yaml"
    path.write_text("version: 1\naccepted:\n- &a {fingerprint: x, reason: y}\n")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--shop-base-url", "http://127.0.0.1:9/shop/api/v1",
         "--shop-baseline", str(path)],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == pytest.ExitCode.USAGE_ERROR
    assert f"shop-contract: --baseline {path} at /accepted/0: an anchor or alias" in done.stderr
    assert "Traceback" not in done.stderr + done.stdout


def test_the_schema_ships_with_the_package_and_matches_what_is_written() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = pyproject["tool"]["setuptools"]["package-data"]["contract_tests.outcome"]
    assert any(fnmatch.fnmatch(baseline.SCHEMA_NAME, pattern) for pattern in patterns)
    written = yaml.safe_load(baseline.dumps([Acceptance(MSRP, "r", "2027-01-31")]))
    written["accepted"][0]["expires"] = written["accepted"][0]["expires"].isoformat()  # YAML's date, as read
    assert jsonschema.Draft202012Validator(findings_file.schema(baseline.SCHEMA_NAME)).is_valid(written)
