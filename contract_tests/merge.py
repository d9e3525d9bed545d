"""The shards of one run (`--shard K/N`, each with `--report-dir`) as one ledger, for `shop-contract merge`.

Each shard's findings.json is read back into a Ledger; the shards must belong together (the same
seed, profile, suite and spec versions and N, each K from 1 to N exactly once) and their ledgers
are added up. report.py then renders the merged ledger as it renders a run's, so the merged
summary, JUnit file and findings.json, and the exit code, are those of the unsharded run.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from contract_tests.coverage import Coverage
from contract_tests.findings import Ledger, RunError, RunInfo, Skip, Violation
from contract_tests.reproduce import unsharded

SAME = ("seed", "profile", "suite_version", "spec_version")
"""What the shards of one run share."""


class MergeError(Exception):
    """The directories are not the shards of one run (or cannot be read)."""


def read(directory: Path) -> Ledger:
    """The ledger a shard wrote to `directory`/findings.json."""
    path = directory / "findings.json"
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
        return ledger_of(document)
    except OSError as exc:
        raise MergeError(f"cannot read {path}: {exc.strerror or exc}") from None
    except (ValueError, KeyError, TypeError) as exc:
        raise MergeError(f"{path} is not a findings.json of shop-contract ({type(exc).__name__}: {exc})") from None


def ledger_of(document: dict[str, Any]) -> Ledger:
    """A findings.json (report.as_json) back as a Ledger; its text is already redacted."""
    if "passes" not in document:
        raise KeyError("passes (written by a suite older than `merge`: rerun the shard)")
    run = document["run"]
    ledger = Ledger(run=RunInfo(**{name: run[name] for name in RunInfo.__dataclass_fields__ if name in run}))
    for entry in document["passes"]:
        ledger.passed(entry["surface"], entry["operation"], entry["check"], int(entry["times"]))
    ledger.violations = [Violation(**{**v, "setup": tuple(v.get("setup", ()))}) for v in document["violations"]]
    ledger.not_exercised = [Skip(**skip) for skip in document["not_exercised"]]
    ledger.errors = [RunError(**error) for error in document["errors"]]
    ledger.aborted = document.get("aborted")
    if "coverage" in document:
        ledger.coverage = Coverage.from_json(document["coverage"])
    return ledger


def combine(shards: Sequence[tuple[Path, Ledger]]) -> Ledger:
    """One ledger from the shards of one run; MergeError when they do not make one whole run."""
    if not shards:
        raise MergeError("no shard given")
    by_index: dict[int, Path] = {}
    counts = set()
    for directory, ledger in shards:
        if ledger.run.shard is None:
            raise MergeError(f"{directory} holds a whole run, not a shard (written without --shard)")
        index, count = (int(part) for part in ledger.run.shard.split("/"))
        counts.add(count)
        if index in by_index:
            raise MergeError(f"shard {ledger.run.shard} given twice: {by_index[index]} and {directory}")
        by_index[index] = directory
    if len(counts) > 1:
        raise MergeError(f"the shards split different runs: N is {' and '.join(map(str, sorted(counts)))}")
    count = counts.pop()
    first = shards[0][1].run
    for directory, ledger in shards:
        for name in SAME:
            if getattr(ledger.run, name) != getattr(first, name):
                mine, theirs = getattr(ledger.run, name), getattr(first, name)
                raise MergeError(f"{directory} is another run: {name} {mine}, not {theirs} as in {shards[0][0]}")
    missing = [f"{index}/{count}" for index in range(1, count + 1) if index not in by_index]
    if missing:
        raise MergeError(f"shard(s) {', '.join(missing)} missing")
    ordered = sorted(shards, key=lambda shard: int(str(shard[1].run.shard).split("/")[0]))
    return _added([ledger for _, ledger in ordered], count)


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
        )
    )
    aborted = []
    for ledger in ledgers:
        run = ledger.run
        for name, url in run.targets.items():
            merged.run.targets.setdefault(name, url)
        merged.run.duration = max(merged.run.duration, run.duration)  # the shards run side by side
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
        if ledger.aborted:
            aborted.append(f"shard {run.shard}: {ledger.aborted}")
    merged.aborted = "; ".join(aborted) or None
    return merged
