"""`shop-contract replay` and `--export-tests`: a recorded violation judged again, on the broken variant
that made it and on the correct mock, by the suite and by the exported pytest file alone."""

from __future__ import annotations

import ast
import contextlib
import io
import json
import os
import runpy
import shlex
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from schemathesis.core import curl as schemathesis_curl
from schemathesis.core.shell import ShellType, escape_for_shell

from contract_tests import cli
from contract_tests.outcome import export_tests, report, reproduce, standalone
from contract_tests.outcome.findings import Ledger, RunInfo, Violation
from contract_tests.outcome.fingerprint import violation_id
from contract_tests.outcome.reproduce import words
from contract_tests.spec import Spec
from mock_server.app import create_app
from mock_server.settings import Settings
from tests.support.faults import Answer, Fault, Scope
from tests.support.live import running
from tests.support.ports import free_port
from tests.support.suite import shop_contract
from tests.support.variants import VARIANTS

API_KEY = ["--api-key", "dev-api-key"]


@dataclass(frozen=True)
class Recorded:
    """A run on a broken variant, still serving, and the correct mock beside it."""

    check: str
    report_dir: Path
    exported: Path
    broken: str
    correct: str

    @property
    def ids(self) -> list[str]:
        document = json.loads((self.report_dir / "findings.json").read_text())
        return [v["id"] for v in document["violations"] if v["check"] == self.check]


@pytest.fixture(scope="module")
def correct() -> Iterator[str]:
    with running(create_app(Settings())) as origin:
        yield f"{origin}/shop/api/v1"


def _recorded(name: str, correct: str, tmp: Path, shell: str | None) -> Iterator[Recorded]:
    """The run made from `shell` ($SHELL; None: unset, as on many CI runners): its curls read back alike."""
    variant = next(v for v in VARIANTS if v.name == name)
    with pytest.MonkeyPatch.context() as environment, running(variant.build()) as origin:
        if shell is None:
            environment.delenv("SHELL", raising=False)
        else:
            environment.setenv("SHELL", shell)
        base = f"{origin}/shop/api/v1"
        args = ["--base-url", base, *API_KEY, "--seed", "7", "--quiet", "--export-tests", str(tmp / "exported")]
        args += [arg for op in variant.include for arg in ("--include", op)]
        args += ["--no-conformance"] if variant.phases == "domain" else ["--no-domain", "--profile", "fast"]
        args += ["--checks", variant.check]  # the variant's own check: others (read_back...) see its defect too
        outcome = shop_contract(args, tmp / "report")
        assert outcome.code == 1, outcome.stderr
        exported = tmp / "exported" / export_tests.FILE
        assert f"wrote {exported}" in outcome.stdout
        yield Recorded(variant.check, tmp / "report", exported, base, correct)


@pytest.fixture(scope="module")
def status_code(correct: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Recorded]:
    """A Schemathesis check: the create answers 200, not its documented 201."""
    yield from _recorded("create_answers_200", correct, tmp_path_factory.mktemp("status"), shell=None)


@pytest.fixture(scope="module")
def round_trip(correct: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Recorded]:
    """A domain test: a PATCH of one field resets the others."""
    yield from _recorded("patch_resets_other_fields", correct, tmp_path_factory.mktemp("round_trip"), "/usr/bin/fish")


@dataclass(frozen=True)
class Replayed:
    code: int
    stdout: str
    stderr: str


def replay(*args: str) -> Replayed:
    """`shop-contract replay ARGS`, in this process (the suite's imports are paid once per session)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(["replay", *args])
    return Replayed(code, out.getvalue(), err.getvalue())


@pytest.mark.parametrize("recorded", ["status_code", "round_trip"])
def test_replay_by_id_is_still_failing_on_the_broken_variant_and_fixed_on_the_correct_mock(
    recorded: str, request: pytest.FixtureRequest
) -> None:
    run: Recorded = request.getfixturevalue(recorded)
    first = run.ids[0]
    still = replay(first, "--report-dir", str(run.report_dir), "--base-url", run.broken, *API_KEY)
    assert still.code == 1, still.stdout + still.stderr
    assert f"{first}  STILL FAILING  [backend]" in still.stdout
    assert f"{run.check}\n    rule: " in still.stdout
    assert "    HTTP " in still.stdout  # the answer judged, as evidence
    fixed = replay(first, "--report-dir", str(run.report_dir), "--base-url", run.correct, *API_KEY)
    assert fixed.code == 0, fixed.stdout + fixed.stderr
    assert f"{first}  FIXED" in fixed.stdout
    assert "STILL FAILING" not in fixed.stdout


def test_replay_all_judges_every_violation_with_credentials_from_the_environment(
    status_code: Recorded, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SHOP_CONTRACT_API_KEY", "dev-api-key")
    still = replay("--all", "--report-dir", str(status_code.report_dir), "--base-url", status_code.broken)
    assert still.code == 1, still.stderr
    assert all(f"{name}  STILL FAILING" in still.stdout for name in status_code.ids)
    assert "dev-api-key" not in still.stdout
    fixed = replay("--all", "--report-dir", str(status_code.report_dir), "--base-url", status_code.correct)
    assert fixed.code == 0, fixed.stderr
    verdicts = [line.split()[:2] for line in fixed.stdout.splitlines() if line[:8] in status_code.ids]
    assert verdicts == [[name, "FIXED"] for name in status_code.ids]


def test_an_unknown_id_is_one_line_and_exit_2(status_code: Recorded) -> None:
    outcome = replay("0000beef", "--report-dir", str(status_code.report_dir), *API_KEY)
    assert outcome.code == 2
    assert outcome.stderr.strip().splitlines() == [
        f"shop-contract: error: no violation with id 0000beef in {status_code.report_dir / 'findings.json'}"
    ]
    assert outcome.stdout == ""


def test_a_missing_report_dir_is_one_line_and_exit_2(tmp_path: Path) -> None:
    outcome = replay("--all", "--report-dir", str(tmp_path / "nowhere"), *API_KEY)
    assert outcome.code == 2
    assert outcome.stderr.strip().splitlines() == [
        f"shop-contract: error: {tmp_path / 'nowhere'}: no such report directory"
    ]


def test_a_report_dir_without_a_valid_findings_file_is_one_line_and_exit_2(tmp_path: Path) -> None:
    (tmp_path / "findings.json").write_text('{"run": 1}')
    outcome = replay("--all", "--report-dir", str(tmp_path), *API_KEY)
    assert outcome.code == 2
    assert len(outcome.stderr.strip().splitlines()) == 1
    assert "findings.json" in outcome.stderr


def test_an_unreachable_target_is_one_line_and_exit_2(status_code: Recorded) -> None:
    nowhere = f"http://127.0.0.1:{free_port()}/shop/api/v1"
    outcome = replay("--all", "--report-dir", str(status_code.report_dir), "--base-url", nowhere, *API_KEY)
    assert outcome.code == 2
    (line,) = outcome.stderr.strip().splitlines()
    assert line.startswith(f"shop-contract: error: cannot reach the backend at {nowhere}")


@pytest.fixture(scope="session")
def plain_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment with pytest and httpx only (pip through the configured index)."""
    venv = tmp_path_factory.mktemp("plain") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "-q", "pytest", "httpx"], check=True, capture_output=True)
    lost = subprocess.run([str(python), "-c", "import contract_tests"], capture_output=True, cwd=venv)
    assert lost.returncode != 0, "the plain environment must not see the suite"
    return python


def plain_pytest(python: Path, exported: Path, base_url: str) -> subprocess.CompletedProcess[str]:
    env = {"PATH": os.environ["PATH"], "SHOP_CONTRACT_BASE_URL": base_url, "SHOP_CONTRACT_API_KEY": "dev-api-key"}
    command = [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", str(exported)]
    return subprocess.run(command, capture_output=True, text=True, env=env, cwd=exported.parent, timeout=120)


@pytest.mark.e2e  # the exported file in a fresh venv under plain pytest: tox -e e2e (issue 37)
@pytest.mark.parametrize("recorded", ["status_code", "round_trip"])
def test_the_exported_file_fails_on_the_broken_variant_and_passes_on_the_correct_mock(
    recorded: str, plain_python: Path, request: pytest.FixtureRequest
) -> None:
    run: Recorded = request.getfixturevalue(recorded)
    names = {f"test_violation_{name}" for name in run.ids}
    broken = plain_pytest(plain_python, run.exported, run.broken)
    assert broken.returncode == 1, broken.stdout[-3000:]
    failed = {line.split("::")[1].split()[0] for line in broken.stdout.splitlines() if line.startswith("FAILED")}
    assert names <= failed
    passed = plain_pytest(plain_python, run.exported, run.correct)
    assert passed.returncode == 0, passed.stdout[-3000:]
    assert " passed" in passed.stdout and "skipped" not in passed.stdout


HOSTILE = "x'''\"\"\"\\\n); open(MARK, 'w').write('owned') #\x1b[2J\u202e"


def test_hostile_values_in_a_report_reach_the_exported_file_as_data_only(tmp_path: Path) -> None:
    mark = tmp_path / "owned"
    hostile = HOSTILE.replace("MARK", repr(str(mark)))
    curl = f"curl -X POST -H 'X-API-Key: [Filtered]' -H 'Content-Type: application/json' -d {_quoted(hostile)} "
    violation = Violation(
        "status_code_conformance",
        "backend",
        "create_product_line",
        hostile,
        curl + _quoted(f"http://h/shop/api/v1/productlines/?q={hostile}"),
        hostile,
        (curl + "http://h/shop/api/v1/productlines/",),
    )
    path = export_tests.write([violation], {"backend": hostile}, Spec.load(), tmp_path, secrets=("dev-api-key",))
    tree = ast.parse(path.read_text())
    data = runpy.run_path(str(path))  # defining the tests runs only the file's own code
    assert not mark.exists()
    tests = [node.name for node in tree.body if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")]
    assert tests == [f"test_violation_{violation_id(violation)}"]
    assert data["TARGETS"] == {"backend": hostile}
    entry = data["VIOLATIONS"][violation_id(violation)]
    assert entry["rule"] == hostile
    assert entry["steps"][-1]["body"] == hostile


def test_a_value_that_is_not_plain_data_is_refused() -> None:
    with pytest.raises(export_tests.ExportError):
        export_tests.literal({"x": object()})
    with pytest.raises(export_tests.ExportError):
        export_tests.literal(float("nan"))


def _quoted(text: str) -> str:
    """`text` as Schemathesis quotes it in a curl: bash's $'...' when it holds a control character."""
    return escape_for_shell(text, ShellType.BASH).escaped_value if not text.isprintable() else shlex.quote(text)


@pytest.mark.parametrize("text", ["plain", 'it\'s "quoted"', "$HOME `x` \\", "ü\r\n\x01 ' \\x41", ""])
def test_a_curl_word_reads_back_as_sent(text: str) -> None:
    assert words(f"curl -d {_quoted(text)} http://h/")[2] == text


@pytest.mark.parametrize("shell", [None, "/usr/bin/fish", "/bin/sh", "/bin/zsh"])
def test_a_curl_is_written_for_bash_whatever_shell_the_run_started_from(
    shell: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    if shell is None:
        monkeypatch.delenv("SHELL", raising=False)
    else:
        monkeypatch.setenv("SHELL", shell)
    body, header = "ü\r\n\x01 ' \\x41 \u202e", "a\tb"
    with reproduce.for_bash():
        written = schemathesis_curl.generate(
            method="POST",
            url="http://h/x",
            body=body,
            verify=True,
            headers={"X-A": header},
            known_generated_headers=None,
        )
    assert written.warnings == []
    assert reproduce.parse_curl(written.command, ansi_c=True) == ("POST", "http://h/x", [("X-A", header)], body)
    assert os.environ.get("SHELL") == shell


def test_schemathesis_warnings_after_a_curl_are_not_part_of_its_request() -> None:
    warning = "\N{WARNING SIGN}  Request body contains non-printable characters."
    with_warnings = f"curl -X POST -d $'\\x01' http://h/x\n\n{warning}"
    assert reproduce.parse_curl(with_warnings, ansi_c=True) == ("POST", "http://h/x", [], "\x01")


def test_a_fresh_identifier_is_followed_by_every_later_request() -> None:
    boundary = "b0"
    multipart = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="productline"\r\n\r\nCars\r\n'
        f'--{boundary}\r\nContent-Disposition: form-data; name="note"\r\n\r\nCars\r\n--{boundary}--\r\n'
    )
    request = {
        "method": "PUT",
        "url": "http://h/api/productlines/Cars/?x=Cars",
        "headers": [["Content-Type", f"multipart/form-data; boundary={boundary}"]],
        "body": multipart,
    }
    moved = standalone.substituted(request, "productline", "Cars", "Cars~new")
    assert moved["url"] == "http://h/api/productlines/Cars~new/?x=Cars"
    assert standalone.fields(moved) == {"productline": "Cars~new", "note": "Cars"}
    form = {**request, "headers": [["Content-Type", "application/x-www-form-urlencoded"]], "body": "productline=Cars"}
    assert standalone.fields(standalone.substituted(form, "productline", "Cars", "a b")) == {"productline": "a b"}
    as_json = {**request, "headers": [["Content-Type", "application/json"]], "body": '{"productline": "Cars"}'}
    assert standalone.fields(standalone.substituted(as_json, "productline", "Cars", 7)) == {"productline": 7}


@pytest.mark.parametrize("prop", [{"type": "string", "maxLength": 10}, {"type": "integer", "maximum": 2**31 - 1}])
def test_a_fresh_identifier_keeps_within_the_fields_bounds(prop: dict[str, object]) -> None:
    fresh = {standalone.fresh_identifier(prop, "Classic Cars") for _ in range(20)}
    assert len(fresh) == 20
    for value in fresh:
        assert len(value) <= 10 if isinstance(value, str) else 1_000_000_000 <= value <= 2**31 - 1


def test_a_fresh_identifier_keeps_the_trailing_characters_an_identifier_test_is_about() -> None:
    fresh = standalone.fresh_identifier({"type": "string", "maxLength": 50}, "ct~ab.. ")
    assert fresh.startswith("ct~ab~") and fresh.endswith(".. ") and len(fresh) == len("ct~ab.. ") + 8


def test_the_standalone_module_imports_nothing_but_the_standard_library_and_httpx() -> None:
    tree = ast.parse(Path(standalone.__file__).read_text())
    imported = {
        (node.module if isinstance(node, ast.ImportFrom) else alias.name).split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }
    assert imported - set(sys.stdlib_module_names) == {"httpx"}


def test_merge_exports_the_merged_violations(tmp_path: Path) -> None:
    violation = Violation("round_trip", "backend", "get_product", "rule", "curl -X GET http://h/p/", "HTTP 200")
    for index in (1, 2):
        ledger = Ledger(run=RunInfo(seed=7, profile="fast", suite_version="0", spec_version="1", shard=f"{index}/2"))
        ledger.run.targets["backend"] = "http://127.0.0.1:1/shop/api/v1"
        ledger.violated(violation)
        report.write_files(ledger, None, tmp_path / str(index))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = cli.main(["merge", str(tmp_path / "1"), str(tmp_path / "2"), "--export-tests", str(tmp_path / "x")])
    assert code == 1
    exported = tmp_path / "x" / export_tests.FILE
    assert f"wrote {exported}" in out.getvalue()
    names = [node.name for node in ast.parse(exported.read_text()).body if isinstance(node, ast.FunctionDef)]
    assert f"test_violation_{violation_id(violation)}" in names


def test_a_still_failing_answer_is_shown_escaped_and_masked(status_code: Recorded) -> None:
    """A target echoing the API key and terminal escapes in the answer a replay shows."""

    def hostile(scope: Scope) -> Answer:
        return 299, {"content-type": "application/json"}, b'{"note": "\x1b[2J dev-api-key \xe2\x80\xae"}'

    with running(Fault(create_app(Settings()), "POST", "/shop/api/v1/productlines/", respond=hostile)) as origin:
        first = status_code.ids[0]
        outcome = replay(
            first, "--report-dir", str(status_code.report_dir), "--base-url", f"{origin}/shop/api/v1", *API_KEY
        )
    assert outcome.code == 1, outcome.stdout + outcome.stderr
    assert "\\x1b[2J [masked] \\u202e" in outcome.stdout
    assert "\x1b" not in outcome.stdout and "dev-api-key" not in outcome.stdout and "\u202e" not in outcome.stdout


@pytest.mark.parametrize(
    ("sent", "stored", "same"),
    [
        ("\x1dNantes ", "Nantes", True),  # DRF's CharField: str.strip() (decision trimmed-text)
        (" a b\u00a0", "a b", True),
        ("a  b", "a b", False),  # inside a text, nothing may change
        ("Nantes", " Nantes", False),
        ("Nantes", "nantes", False),
        ("10.5", "10.50", True),
    ],
)
def test_a_text_with_the_white_space_at_its_ends_trimmed_is_the_same_value_and_nothing_else(
    sent: str, stored: str, same: bool
) -> None:
    assert standalone.same_value(sent, stored) is same
