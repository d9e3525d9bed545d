"""The shards of one run (`--shard K/N`, each with `--report-dir`) as one ledger, for `shop-contract merge`.

Each shard's findings.json is read back into a Ledger. The shards must belong together: the same
seed, profile, suite and spec versions and N, with each K from 1 to N exactly once. Then their ledgers
are added up.

report.py renders the merged ledger as it renders a run's. So the merged summary, JUnit file and
findings.json, and the exit code, are those of the unsharded run.

Violations a shard's baseline accepted are added up with the others, and judged again on the merged
run. They are judged by `merge --baseline FILE`, or else by the first shard's baseline entries.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from contract_tests.outcome import findings_file
from contract_tests.outcome.coverage import Coverage
from contract_tests.outcome.findings import Acceptance, BaselineRun, Ledger, RunError, RunInfo, Skip, Violation
from contract_tests.outcome.findings_file import FindingsError
from contract_tests.outcome.reproduce import unsharded
from contract_tests.sharding import Shard, parse_shard

SAME = ("seed", "profile", "suite_version", "spec_version")
"""What the shards of one run share."""
FILE = "findings.json"
SHOWN = 60
"""Characters of a shard's value quoted in an error."""
OLDER = " (written by a suite older than `merge`: rerun the shard)"
"""What a missing /passes means. findings.json lacked the passes per check before `merge` existed."""


class MergeError(Exception):
    """The directories are not the shards of one run, or cannot be read."""


def read(directory: Path) -> Ledger:
    """The ledger a shard wrote to `directory`/findings.json, once the file is valid (findings_file.load)."""
    path = _file(directory)
    try:
        return ledger_of(findings_file.load(path))
    except OSError as exc:
        raise MergeError(f"cannot read {path}: {exc.strerror or exc}") from None
    except FindingsError as exc:
        older = (exc.pointer, exc.problem) == ("/passes", "missing")
        raise MergeError(f"{exc}{OLDER if older else ''}") from None


def ledger_of(document: dict[str, Any]) -> Ledger:
    """A findings.json valid against the schema (report.as_json) back as a Ledger. Its text is already
    redacted."""
    run = document["run"]
    ledger = Ledger(run=RunInfo(**{name: run[name] for name in RunInfo.__dataclass_fields__}))
    for entry in document["passes"]:
        ledger.passed(entry["surface"], entry["operation"], entry["check"], entry["times"])
    judged = document.get("baseline")
    recorded = [*document["violations"], *(judged["accepted"] if judged else [])]  # The merge judges them again.
    ledger.violations = [Violation(**{**_recorded(v), "setup": tuple(v["setup"])}) for v in recorded]
    if judged:  # The shard's baseline, which the merge applies when given none of its own.
        entries = [Acceptance(**entry) for entry in judged["entries"]]
        ledger.baseline = BaselineRun(judged["file"], entries, strict=judged["strict"])
    ledger.not_exercised = [Skip(**skip) for skip in document["not_exercised"]]
    ledger.errors = [RunError(**error) for error in document["errors"]]
    ledger.unreached = list(document["unreached"])
    ledger.aborted = document["aborted"]
    ledger.coverage = Coverage.from_json(document["coverage"])
    return ledger


def _recorded(violation: dict[str, Any]) -> dict[str, Any]:
    """A violation as recorded, without what the reports derive from it: its id and fingerprint."""
    return {name: value for name, value in violation.items() if name not in ("id", "fingerprint")}


def combine(shards: Sequence[tuple[Path, Ledger]]) -> Ledger:
    """One ledger from the shards of one run. It raises MergeError when they do not make one whole run."""
    if not shards:
        raise MergeError("no shard given")
    by_index: dict[int, Path] = {}
    counts: set[int] = set()
    for directory, ledger in shards:
        part = _shard(directory, ledger)
        if counts and part.count not in counts:
            split = " and ".join(map(str, sorted({*counts, part.count})))
            raise MergeError(f"{_file(directory)} at /run/shard: the shards split different runs: N is {split}")
        counts.add(part.count)
        if part.index in by_index:
            again = f"shard {part} given twice ({_file(by_index[part.index])} too)"
            raise MergeError(f"{_file(directory)} at /run/shard: {again}")
        by_index[part.index] = directory
    count = counts.pop()
    first = shards[0][1].run
    for directory, ledger in shards:
        for name in SAME:
            if getattr(ledger.run, name) != getattr(first, name):
                mine, theirs = _shown(getattr(ledger.run, name)), _shown(getattr(first, name))
                another = f"another run: {name} {mine}, not {theirs} as in {_file(shards[0][0])}"
                raise MergeError(f"{_file(directory)} at /run/{name}: {another}")
    missing = [f"{index}/{count}" for index in range(1, count + 1) if index not in by_index]
    if missing:
        raise MergeError(f"shard(s) {', '.join(missing)} missing")
    ordered = sorted(shards, key=lambda shard: _shard(*shard).index)
    return _added([ledger for _, ledger in ordered], count)


def _shard(directory: Path, ledger: Ledger) -> Shard:
    """The shard `ledger` says it is, by the rule of `--shard` (1 <= K <= N)."""
    if ledger.run.shard is None:
        raise MergeError(f"{_file(directory)} at /run/shard: a whole run, not a shard (written without --shard)")
    try:
        return parse_shard(ledger.run.shard)
    except argparse.ArgumentTypeError as exc:
        raise MergeError(f"{_file(directory)} at /run/shard: {exc}") from None


def _file(directory: Path) -> Path:
    return directory / FILE


def _shown(value: object) -> str:
    """A value read from a shard, as JSON on one line and cut short, because the file is another runner's."""
    text = json.dumps(value)
    return text if len(text) <= SHOWN else text[:SHOWN] + "..."


def _added(ledgers: list[Ledger], count: int) -> Ledger:
    first = ledgers[0].run
    merged = Ledger(
        run=RunInfo(
            seed=first.seed,
            profile=first.profile,
            suite_version=first.suite_version,
            spec_version=first.spec_version,
            shards=count,
            command=unsharded(first.command),
            narrowed=sorted({flag for ledger in ledgers for flag in ledger.run.narrowed}),
        )
    )
    aborted = []
    for ledger in ledgers:
        run = ledger.run
        for name, url in run.targets.items():
            merged.run.targets.setdefault(name, url)
        merged.run.duration = max(merged.run.duration, run.duration)  # The shards run side by side.
        merged.run.refused_credentials += run.refused_credentials
        for operation, seconds in run.timings.items():
            merged.run.timings[operation] = merged.run.timings.get(operation, 0.0) + seconds
        merged.passes.update(ledger.passes)
        merged.coverage.add(ledger.coverage)
        for violation in ledger.violations:
            merged.violated(violation)
        for skip in ledger.not_exercised:
            merged.skipped(skip.surface, skip.operation, skip.check, skip.reason)
        merged.errors += [replace(error, where=f"shard {run.shard}: {error.where}") for error in ledger.errors]
        merged.unreached += [f"shard {run.shard}: {part}" for part in ledger.unreached]
        if ledger.aborted:
            aborted.append(f"shard {run.shard}: {ledger.aborted}")
    merged.aborted = "; ".join(aborted) or None
    merged.baseline = next((ledger.baseline for ledger in ledgers if ledger.baseline is not None), None)
    return merged
