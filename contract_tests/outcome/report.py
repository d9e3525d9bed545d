"""What a run tells people.

It says which run it was, and gives a summary per check and per operation. Each violation comes with
its evidence: the requests that set up its state, then the failing one. It lists the checks not
exercised and why, and the coverage of the contract. For CI it writes JUnit XML (outcome/junit.py).

The text summary ends with one line per violated (surface, operation, check), the coverage figure and
the path of report.html (html_report.py). That report is drawn from the same document as findings.json.

Everything shown passes through the run's `Redactor`, which masks secrets and escapes control
characters. So the JUnit file is always well-formed XML, and no answer can act on a terminal.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import asdict
from pathlib import Path
from typing import Any

from contract_tests.options import Options
from contract_tests.outcome import files, html_report
from contract_tests.outcome.baseline import shown_fingerprint
from contract_tests.outcome.evidence import describe
from contract_tests.outcome.findings import Acceptance, Key, Ledger, Violation
from contract_tests.outcome.fingerprint import fingerprint, violation_id
from contract_tests.outcome.generation import generated_digest
from contract_tests.outcome.junit import junit_xml
from contract_tests.outcome.reproduce import httpx_script
from contract_tests.redact import Redactor

HTML = "report.html"
RULE = "-" * 100
RULE_SHOWN = 100
"""Characters of a violation's rule shown in the closing table. The whole rule is in the reports."""


def _run_lines(ledger: Ledger) -> list[str]:
    run = ledger.run
    targets = ", ".join(f"{name} {url}" for name, url in run.targets.items()) or "(none)"
    part = f", shard {run.shard}" if run.shard else (f", {run.shards} shards merged" if run.shards else "")
    kind = "consumer contract" if ledger.consumer is not None else f"seed {run.seed}, profile {run.profile}{part}"
    return [
        f"Run: {kind}, {run.duration:.1f} s; shop-contract {run.suite_version}, spec {run.spec_version}",
        f"Targets: {targets}",
        f"Requests refused for the suite's own credentials (HTTP 401): {run.refused_credentials}",
        *_generated(ledger),
    ]


def _generated(ledger: Ledger) -> list[str]:
    """What the run generated, in one digest, and what timing kept from the target.

    findings.json has the digest per part."""
    if not ledger.generated:
        return []
    parts = ledger.generated.values()
    unsent = sum(len(part.not_sent) for part in parts)
    said = f"; {unsent} not sent or refused after every retry, by timing (findings.json)" if unsent else ""
    cases = sum(part.count() for part in parts)
    return [
        f"Generated: {cases} case(s) in {len(parts)} part(s), digest {generated_digest(ledger.generated)[:16]}{said}"
    ]


def _by_check(ledger: Ledger) -> list[str]:
    passed: Counter[str] = Counter()
    for key, times in ledger.passes.items():
        passed[key.check] += times
    failed = Counter(v.check for v in ledger.violations)
    lines = ["Checks (responses judged, violations):"]
    for check in sorted(set(passed) | set(failed)):
        verdict = f"{failed[check]} VIOLATION(S)" if failed[check] else "ok"
        lines.append(f"  {check:<32} {passed[check] + failed[check]:>7}   {verdict}")
    return lines


def _by_operation(ledger: Ledger) -> list[str]:
    operations: dict[tuple[str, str], set[str]] = {}
    for key in [*ledger.passes, *ledger.failures()]:
        operations.setdefault((key.surface, key.operation), set()).add(key.check)
    failures = ledger.failures()
    lines = ["Operations:"]
    for (surface, operation), checks in sorted(operations.items()):
        broken = sorted({k.check for k in failures if (k.surface, k.operation) == (surface, operation)})
        verdict = "FAILED: " + ", ".join(broken) if broken else "ok"
        lines.append(f"  {surface:<8} {operation:<28} {len(checks):>3} checks   {verdict}")
    return lines


def _not_exercised(ledger: Ledger) -> list[str]:
    if not ledger.not_exercised:
        return []
    lines = ["Not exercised (checks that could not run, and why):"]
    lines += [f"  {s.surface:<8} {s.operation:<28} {s.check}: {s.reason}" for s in ledger.not_exercised]
    return ["", *lines]


def _consumer(ledger: Ledger) -> list[str]:
    """The consumer contract's section. It says which contract, against what, and each interaction's verdict."""
    run = ledger.consumer
    if run is None:
        return []
    against = "the spec alone" if run.against == "spec" else "the backend"
    same = "the same spec" if run.same_spec else "another spec"
    lines = [
        "",
        f"Consumer contract: {run.consumer} ({run.file}), checked against {against}; "
        f"recorded with spec {run.recorded_spec} ({same})",
    ]
    if run.journal_full:
        lines.append("  the mock's journal was full when it was recorded: older requests may be missing from it")
    for interaction in run.interactions:
        answered = "" if interaction.status is None else f", backend {interaction.status}"
        lines.append(
            f"  {interaction.name:<28} {interaction.verdict:<13} mock {interaction.recorded_status}{answered}  "
            f"{interaction.summary}"
        )
        lines += [f"      {problem}" for problem in interaction.problems]
    return lines


def _errors(ledger: Ledger) -> list[str]:
    """The run errors grouped by cause, with the causes in the order first met."""
    if not ledger.errors:
        return []
    lines = ["", "Errors (parts of the run that could not complete), by cause:"]
    for cause, count in ledger.causes().items():
        lines.append(f"  {cause} ({count}):")
        lines += [f"    {error}" for error in ledger.errors if error.cause == cause]
    return lines


def summary(ledger: Ledger, *, verbose: bool = True, html: Path | None = None) -> str:
    """The run as text.

    The `verbose` text (summary.txt, `--verbose`) has every check, operation and violation in full.
    Either way it ends with one line per violated (surface, operation, check). With a baseline, those
    are the new violations, followed by the baseline's section. Then come the coverage figure, the HTML
    report's path (`html`, when written) and the result."""
    parts = [*_run_lines(ledger), *_consumer(ledger)]
    if verbose:
        parts += ["", *_by_check(ledger), "", *_by_operation(ledger), *_not_exercised(ledger)]
        if ledger.violations:
            parts += ["", RULE, f"{len(ledger.violations)} violation(s):", ""]
            parts += [describe(n, v) + "\n" for n, v in enumerate(ledger.violations, 1)]
    elif ledger.not_exercised:
        parts += ["", f"{len(ledger.not_exercised)} check(s) not exercised on some operation (see the report)"]
    parts += _errors(ledger) + _unreached(ledger)
    coverage = [] if ledger.consumer is not None else [ledger.coverage.headline()]  # A replay covers what it recorded.
    parts += ["", *violated_table(ledger), *baseline_lines(ledger, verbose=verbose)[1:], *coverage]
    if html is not None:
        parts.append(f"Report: {html}")
    return Redactor(ledger.secrets)("\n".join([*parts, "", f"Result: {verdict(ledger)}."]))


def verdict(ledger: Ledger) -> str:
    """The run's result in a few words."""
    new = "new " if ledger.baseline is not None else ""
    said = (
        f"no {new}violation"
        if ledger.ok
        else f"{len(ledger.violations)} {new}violation(s) of {len(ledger.violated_checks())} check(s)"
    )
    if ledger.baseline is not None:
        said += f", {len(ledger.baseline.accepted)} accepted by the baseline"
        stale = len({entry.fingerprint for entry in [*ledger.baseline.not_reproduced, *ledger.baseline.expired]})
        if ledger.baseline.strict and stale:
            said += f"; {stale} baseline entry(ies) not reproduced or expired (--baseline-strict)"
    if ledger.aborted:
        return f"stopped: {ledger.aborted}; {said} up to then"
    if ledger.errors:
        return f"incomplete, {len(ledger.errors)} part(s) could not complete (see Errors); {said} in the rest"
    if ledger.unreached:
        return f"partial, the time budget ended the run before {len(ledger.unreached)} part(s); {said} up to then"
    return said


def _unreached(ledger: Ledger) -> list[str]:
    """What the time budget (`--max-time`) or a signal did not let the run reach. The verdict is partial."""
    if not ledger.unreached:
        return []
    budget = f" of {ledger.run.max_time:g} s" if ledger.run.max_time else ""
    ended = f"the run stopped ({ledger.aborted})" if ledger.aborted else f"the time budget{budget} ended the run"
    lines = ["", f"Partial verdict: {ended} before these parts:"]
    return lines + [f"  {part}" for part in ledger.unreached]


def baseline_lines(ledger: Ledger, *, verbose: bool = True) -> list[str]:
    """The baseline's section, or nothing without a baseline.

    It lists the accepted violations by entry, with their ids when `verbose`. Then it lists the entries
    a complete whole run did not reproduce, and the expired ones."""
    run = ledger.baseline
    if run is None:
        return []
    by_entry: dict[str, list[Violation]] = {}
    for violation in run.accepted:
        by_entry.setdefault(shown_fingerprint(ledger, violation), []).append(violation)
    lines = [
        "",
        f"Baseline {run.file}: {len(run.entries)} entry(ies); {len(run.accepted)} violation(s) accepted, "
        f"{len(run.not_reproduced)} entry(ies) not reproduced, {len(run.expired)} expired",
    ]
    if by_entry:
        lines.append("Accepted (fingerprint, violations, reason):")
        for entry in run.entries:
            found = by_entry.get(entry.fingerprint, [])
            if found:
                lines.append(f"  {entry.fingerprint}  [{len(found)}]  {_accepted_for(entry)}")
                if verbose:
                    lines += [f"      id {violation_id(v)}: {v.rule.splitlines()[0] if v.rule else ''}" for v in found]
    if run.not_reproduced:
        lines.append("Not reproduced by this complete run (fixed? drop with --baseline-prune):")
        lines += [f"  {entry.fingerprint}  ({entry.reason})" for entry in run.not_reproduced]
    elif not run.judged:
        lines.append("Not reproduced: not judged (only a complete run without --shard, --include or --checks tells)")
    if run.expired:
        lines.append("Expired (they accept nothing; their violations are new):")
        lines += [f"  {entry.fingerprint}  (expired {entry.expires}; {entry.reason})" for entry in run.expired]
    return lines


def _accepted_for(entry: Acceptance) -> str:
    return entry.reason + (f" (until {entry.expires})" if entry.expires else "")


def violated_table(ledger: Ledger) -> list[str]:
    """One line per violated (surface, operation, check), with how many violations and the first rule."""
    failures = ledger.failures()
    if not failures:
        return []
    lines = ["Violated (surface, operation, [check], violations, first rule broken):"]
    for key in sorted(failures, key=lambda k: (k.surface, k.operation, k.check)):
        first = next(v for v in ledger.violations if Key(v.surface, v.operation, v.check) == key)
        rule = first.rule.splitlines()[0] if first.rule else ""
        rule = rule if len(rule) <= RULE_SHOWN else rule[: RULE_SHOWN - 1] + "…"
        check = f"[{key.check}]"
        lines.append(f"  {key.surface:<8} {key.operation:<28} {check:<34} {failures[key]:>4}  {rule}")
    return lines


def as_json(ledger: Ledger) -> dict[str, object]:
    """The ledger for machines.

    It holds the run, the checks exercised and not, the violations, the errors and the coverage. In the
    violations' order, it also holds each one's requests as httpx scripts."""
    shown = Redactor(ledger.secrets)
    run = asdict(ledger.run)
    document = {
        "run": run,
        "exercised": sorted(ledger.exercised()),
        "passes": [{**asdict(key), "times": times} for key, times in sorted(ledger.passes.items(), key=_order)],
        "not_exercised": [asdict(skip) for skip in ledger.not_exercised],
        "violations": [{"id": violation_id(v), "fingerprint": fingerprint(v), **asdict(v)} for v in ledger.violations],
        "errors": [asdict(error) for error in ledger.errors],
        "aborted": ledger.aborted,
        "unreached": ledger.unreached,
        "coverage": ledger.coverage.as_json(),
        "consumer": None if ledger.consumer is None else asdict(ledger.consumer),
        "baseline": _baseline_json(ledger),
        "generated": {name: part.as_json() for name, part in sorted(ledger.generated.items())},
        "scripts": [
            {"request": httpx_script(v.curl), "setup": [httpx_script(step) for step in v.setup]}
            for v in ledger.violations
        ],
    }
    cleaned: dict[str, object] = _redacted(document, shown)
    return cleaned


def _baseline_json(ledger: Ledger) -> dict[str, object] | None:
    run = ledger.baseline
    if run is None:
        return None
    document = asdict(run)
    document["accepted"] = [{"id": violation_id(v), "fingerprint": fingerprint(v), **asdict(v)} for v in run.accepted]
    return document


def _order(item: tuple[Key, int]) -> tuple[str, str, str]:
    key = item[0]
    return key.surface, key.operation, key.check


def _redacted(value: Any, shown: Redactor) -> Any:
    """`value` with every string in it redacted, keys too."""
    if isinstance(value, str):
        return shown(value)
    if isinstance(value, dict):
        return {shown(str(key)): _redacted(item, shown) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_redacted(item, shown) for item in value]
    return value


def write(ledger: Ledger, options: Options) -> list[Path]:
    """Write the JUnit file and the report directory, if asked for, and return the paths written."""
    return write_files(ledger, options.junit_xml, options.report_dir)


def write_files(ledger: Ledger, junit_file: Path | None, report_dir: Path | None) -> list[Path]:
    """Write those of `junit_file` and `report_dir` given, and return the paths written.

    `report_dir` gets report.html, summary.txt, junit.xml and findings.json. Each file appears whole or
    not at all (outcome/files.py)."""
    written = []
    document = junit_xml(ledger)
    targets = [junit_file] if junit_file else []
    if report_dir is not None:
        targets.append(report_dir / "junit.xml")
    for junit in targets:
        junit.parent.mkdir(parents=True, exist_ok=True)
        files.write(junit, document)
        written.append(junit)
    if report_dir is not None:
        report_dir.mkdir(parents=True, exist_ok=True)
        data = as_json(ledger)
        findings = report_dir / "findings.json"
        files.write(findings, json.dumps(data, indent=2).encode("utf-8"))
        html = report_dir / HTML
        files.write(html, html_report.render(data).encode("utf-8"))
        text = report_dir / "summary.txt"
        # The summary names report.html by a relative path, because the two files sit side by side.
        files.write(text, (summary(ledger, html=Path(HTML)) + "\n").encode("utf-8"))
        written += [text, findings, html]
    return written
