"""What a run tells people: a summary per check and per operation, each violation with its evidence,
and JUnit XML for CI (one test case per surface, operation and check).
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import asdict
from pathlib import Path

from contract_tests.findings import Key, Ledger, Violation
from contract_tests.options import Options

RULE = "-" * 100


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


def describe(number: int, violation: Violation) -> str:
    indent = "\n       "
    return "\n".join(
        [
            f"{number}. [{violation.check}] {violation.surface} {violation.operation}",
            f"   rule broken: {violation.rule}",
            "   request:" + indent + violation.curl.replace("\n", indent),
            "   response:" + indent + violation.response.replace("\n", indent),
        ]
    )


def summary(ledger: Ledger) -> str:
    parts = [*_by_check(ledger), "", *_by_operation(ledger)]
    if ledger.violations:
        parts += ["", RULE, f"{len(ledger.violations)} violation(s):", ""]
        parts += [describe(n, v) + "\n" for n, v in enumerate(ledger.violations, 1)]
    if ledger.errors:
        parts += ["", "Errors (parts of the run that could not complete):", *(f"  {e}" for e in ledger.errors)]
    verdict = (
        "no violation"
        if ledger.ok
        else f"{len(ledger.violations)} violation(s) of {len(ledger.violated_checks())} check(s)"
    )
    return "\n".join([*parts, "", f"Result: {verdict}."])


def junit_xml(ledger: Ledger) -> bytes:
    keys = sorted(set(ledger.passes) | set(ledger.failures()), key=lambda k: (k.surface, k.operation, k.check))
    failures = ledger.failures()
    suite = ET.Element(
        "testsuite",
        name="shop-contract",
        tests=str(len(keys) + len(ledger.errors)),
        failures=str(len(failures)),
        errors=str(len(ledger.errors)),
    )
    for key in keys:
        case = ET.SubElement(suite, "testcase", classname=f"{key.surface}.{key.operation}", name=key.check)
        found = [v for v in ledger.violations if Key(v.surface, v.operation, v.check) == key]
        if found:
            failure = ET.SubElement(case, "failure", message=found[0].rule[:500])
            failure.text = "\n\n".join(describe(n, v) for n, v in enumerate(found, 1))
    for number, error in enumerate(ledger.errors, 1):
        case = ET.SubElement(suite, "testcase", classname="run", name=f"error-{number}")
        ET.SubElement(case, "error", message=error[:500]).text = error
    document: bytes = ET.tostring(suite, encoding="utf-8", xml_declaration=True)
    return document


def as_json(ledger: Ledger) -> dict[str, object]:
    """The ledger for machines: the checks exercised, the violations and the errors."""
    return {
        "exercised": sorted(ledger.exercised()),
        "violations": [asdict(violation) for violation in ledger.violations],
        "errors": ledger.errors,
    }


def write(ledger: Ledger, options: Options) -> list[Path]:
    """Write the JUnit file and the report directory, if asked for; the paths written."""
    written = []
    junit = options.junit_xml or (options.report_dir / "junit.xml" if options.report_dir else None)
    if junit is not None:
        junit.parent.mkdir(parents=True, exist_ok=True)
        junit.write_bytes(junit_xml(ledger))
        written.append(junit)
    if options.report_dir is not None:
        options.report_dir.mkdir(parents=True, exist_ok=True)
        text = options.report_dir / "summary.txt"
        text.write_text(summary(ledger) + "\n", encoding="utf-8")
        findings = options.report_dir / "findings.json"
        findings.write_text(json.dumps(as_json(ledger), indent=2), encoding="utf-8")
        written += [text, findings]
    return written
