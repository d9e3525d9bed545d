"""`--shard K/N` and `shop-contract merge`: the shards partition the work, and merged they find what the
unsharded run finds, with its verdict and exit code.

The runs are in-process (`cli.main`), against the broken variants of the mock (tests/support/variants.py)
narrowed as test_broken_variants.py narrows them; every variant runs under `-m sharding`
(`tox -e sharding`). The unsharded run of a variant is the run test_broken_variants.py would make of it,
seed for seed, so it also holds that test's assertions (exit 1, caught by its check, named in the
output); that test runs only the variants the default run keeps and the clause variants.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from contract_tests import cli
from contract_tests.identities import Identities
from contract_tests.judge.domain.data import Context
from contract_tests.judge.known import Known
from contract_tests.options import Options
from contract_tests.outcome import report
from contract_tests.outcome.findings import Ledger, RunError, RunInfo, Violation
from contract_tests.run.runner import seeded
from contract_tests.sharding import Shard, collection_name, derived_seed
from contract_tests.spec import Spec
from tests.support.live import running
from tests.support.variants import VARIANTS, Variant

COUNTS = (1, 2, 4)


@pytest.fixture(scope="module")
def spec() -> Spec:
    return Spec.load(None)


def shards(count: int) -> list[Shard]:
    return [Shard(index, count) for index in range(1, count + 1)]


@pytest.mark.parametrize("count", COUNTS)
def test_every_operation_and_collection_is_in_exactly_one_shard(spec: Spec, count: int) -> None:
    operations = [shard.operations(spec) for shard in shards(count)]
    collections = [shard.collections(spec) for shard in shards(count)]
    for op_id in spec.operations:
        assert sum(op_id in share for share in operations) == 1, op_id
    for collection in spec.collections:
        assert sum(collection_name(collection) in share for share in collections) == 1
    assert sum(map(len, operations)) == len(spec.operations)
    assert max(map(len, operations)) - min(map(len, operations)) <= 1  # dealt evenly


@pytest.mark.parametrize("count", COUNTS)
def test_each_domain_unit_is_mine_in_exactly_one_shard(spec: Spec, count: int) -> None:
    contexts = []
    for shard in shards(count):
        known = Known(Identities())
        contexts.append(
            Context(spec, known, shard_operations=shard.operations(spec), shard_collections=shard.collections(spec))
        )
    for op in spec.operations.values():
        assert sum(ctx.operation_is_mine(op) for ctx in contexts) == 1, op.id
    for collection in spec.collections:
        assert sum(ctx.collection_is_mine(collection) for ctx in contexts) == 1


def test_the_assignment_is_the_same_in_every_process(spec: Spec) -> None:
    """Sorted and dealt: no hash seed, no set order (a shard on another runner computes the same)."""
    assert Shard(1, 4).operations(spec) == {sorted(spec.operations)[n] for n in range(0, len(spec.operations), 4)}


@pytest.mark.parametrize(
    ("value", "message"),
    [("0/4", "1 <= K <= N"), ("5/4", "1 <= K <= N"), ("2", "expected K/N"), ("a/b", "expected K/N"), ("1/0", "K <= N")],
)
def test_a_bad_shard_is_a_usage_error(value: str, message: str, capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main(["--base-url", "http://127.0.0.1:1/shop/api/v1", "--shard", value])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and message in err, err


def findings(directory: Path) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((directory / "findings.json").read_text(encoding="utf-8"))
    return document


def violated(directory: Path) -> set[tuple[str, str, str]]:
    return {(v["check"], v["surface"], v["operation"]) for v in findings(directory)["violations"]}


def merge(directories: list[Path], out: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = cli.main(["merge", *map(str, directories), "--report-dir", str(out), "--junit-xml", str(out / "j.xml")])
    return code, capsys.readouterr().err


def run_variant(variant: Variant, report_dir: Path, *shard: str) -> int:
    """One run on a fresh instance of `variant`: a broken DELETE leaves items behind, which would change
    what a later run on the same instance finds."""
    with running(variant.build()) as origin:
        return cli.main([*variant.run_args(origin), *shard, "--report-dir", str(report_dir)])


def sharded_like_unsharded(variant: Variant, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    whole = run_variant(variant, tmp_path / "whole")
    printed = capsys.readouterr()
    expected = violated(tmp_path / "whole") if whole == 1 else set()
    variant.assert_caught(whole, {check for check, _, _ in expected}, printed.out, printed.out[-3000:] + printed.err)
    runs = {
        count: [run_variant(variant, tmp_path / f"{s.index}of{count}", "--shard", str(s)) for s in shards(count)]
        for count in (2, 4)
    }
    capsys.readouterr()
    for count, codes in runs.items():
        parts = [tmp_path / f"{index}of{count}" for index in range(1, count + 1)]
        found = set().union(*map(violated, parts))
        assert found == expected, f"{variant.name}, {count} shards: {sorted(found)} != {sorted(expected)}"
        assert all(code in (0, 1) for code in codes), codes
        code, err = merge(parts, tmp_path / f"merged{count}", capsys)
        assert (code, err) == (whole, ""), err
        assert violated(tmp_path / f"merged{count}") == expected
        assert (tmp_path / f"merged{count}" / "j.xml").read_bytes() == (
            tmp_path / f"merged{count}" / "junit.xml"
        ).read_bytes()
        assert f"{count} shards merged" in (tmp_path / f"merged{count}" / "summary.txt").read_text(encoding="utf-8")


# Seven whole runs a variant (unsharded, 2 and 4 shards) against the mock under uvicorn: in `tox -e sharding`.
@pytest.mark.sharding
@pytest.mark.parametrize("variant", VARIANTS, ids=str)
def test_sharded_runs_find_what_the_unsharded_run_finds(
    variant: Variant, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sharded_like_unsharded(variant, tmp_path, capsys)


def shard_report(directory: Path, shard: str | None, **changes: Any) -> Path:
    """A shard's report directory, written by report.py from a ledger made here."""
    ledger = Ledger(run=RunInfo(seed=7, profile="fast", suite_version="0", spec_version="1", shard=shard))
    ledger.passed("backend", "get_product", "not_a_server_error", 3)
    for name, value in changes.items():
        setattr(ledger, name, value)
    report.write_files(ledger, None, directory)
    return directory


def test_merge_of_clean_shards_is_exit_0_and_adds_up(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    parts = [shard_report(tmp_path / str(k), f"{k}/2") for k in (1, 2)]
    assert merge(parts, tmp_path / "out", capsys) == (0, "")
    assert findings(tmp_path / "out")["passes"] == [
        {"surface": "backend", "operation": "get_product", "check": "not_a_server_error", "times": 6}
    ]


@pytest.mark.parametrize(
    ("changes", "code"),
    [
        ({"violations": [Violation("round_trip", "backend", "get_product", "rule", "curl", "HTTP 200")]}, 1),
        ({"errors": [RunError("connection reset", "backend", "schemathesis", "GET http://x/", "stopped")]}, 2),
        ({"aborted": "credentials lost"}, 2),
    ],
)
def test_merge_has_the_verdict_of_the_worst_shard(
    changes: dict[str, Any], code: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    parts = [shard_report(tmp_path / "1", "1/2"), shard_report(tmp_path / "2", "2/2", **changes)]
    merged_code, _ = merge(parts, tmp_path / "out", capsys)
    assert merged_code == code
    assert "shard 2/2" in (tmp_path / "out" / "summary.txt").read_text(encoding="utf-8") or code == 1


@pytest.mark.parametrize(
    ("shard_names", "message"),
    [
        (["1/3", "2/3"], "shard(s) 3/3 missing"),
        (["1/2", "1/2", "2/2"], "shard 1/2 given twice"),
        (["1/2", "2/4"], "N is 2 and 4"),
        (["1/1", None], "not a shard"),
    ],
)
def test_shards_that_do_not_make_one_run_are_exit_2(
    shard_names: list[str | None], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    parts = [shard_report(tmp_path / str(n), name) for n, name in enumerate(shard_names)]
    code, err = merge(parts, tmp_path / "out", capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1 and message in err, err
    assert not (tmp_path / "out").exists()


def test_shards_of_another_run_or_no_report_are_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first = shard_report(tmp_path / "1", "1/2")
    other = shard_report(tmp_path / "2", "2/2", run=RunInfo(seed=8, profile="fast", spec_version="1", shard="2/2"))
    code, err = merge([first, other], tmp_path / "out", capsys)
    assert code == 2 and "seed 8, not 7" in err, err
    code, err = merge([first, tmp_path / "nothing"], tmp_path / "out", capsys)
    assert code == 2 and "cannot read" in err and len(err.strip().splitlines()) == 1, err


def test_a_report_without_passes_is_exit_2_saying_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """findings.json from before `merge` lacks the passes per check: merging it would lose verdicts."""
    parts = [shard_report(tmp_path / str(k), f"{k}/2") for k in (1, 2)]
    document = findings(parts[1])
    del document["passes"]
    (parts[1] / "findings.json").write_text(json.dumps(document), encoding="utf-8")
    code, err = merge(parts, tmp_path / "out", capsys)
    assert code == 2 and "older than `merge`" in err and len(err.strip().splitlines()) == 1, err


def test_shards_without_a_seed_agree_on_one_derived_from_the_spec_and_n(
    spec: Spec, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Runners started alike, none told a seed: each derives the same one, `merge` accepts them, and the
    merged verdict is that of the unsharded run with that seed."""
    variant = next(v for v in VARIANTS if v.name == "customer_with_another_number")
    seed = derived_seed(spec, 2)
    parts = [tmp_path / f"{s.index}of2" for s in shards(2)]
    for shard, part in zip(shards(2), parts, strict=True):
        with running(variant.build()) as origin:
            unseeded = [arg for arg in variant.run_args(origin, seed=None) if arg != "--quiet"]
            assert cli.main([*unseeded, "--shard", str(shard), "--report-dir", str(part)]) in (0, 1)
    shown = capsys.readouterr().out
    assert shown.count(f"seed: {seed} (derived from the spec digest and 2 shards; --seed overrides)") == 2, shown
    assert {findings(part)["run"]["seed"] for part in parts} == {seed}
    with running(variant.build()) as origin:
        whole_args = [*variant.run_args(origin, seed), "--report-dir", str(tmp_path / "whole")]
        whole = cli.main(whole_args)
    capsys.readouterr()
    code, err = merge(parts, tmp_path / "merged", capsys)
    assert (code, err) == (whole, "")
    assert violated(tmp_path / "merged") == violated(tmp_path / "whole")


def test_the_seed_is_derived_only_for_a_shard_without_seed(spec: Spec) -> None:
    shown: list[str] = []
    base = Options(base_url="http://127.0.0.1:1/shop/api/v1")
    assert seeded(replace(base, shard=Shard(1, 4)), spec, shown.append).seed_value == derived_seed(spec, 4)
    assert derived_seed(spec, 4) != derived_seed(spec, 2)
    assert seeded(replace(base, shard=Shard(1, 4), seed=7), spec, shown.append).seed_value == 7
    assert seeded(base, spec, shown.append) is base
    assert len(shown) == 1
