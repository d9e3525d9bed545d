"""The run as JUnit XML, for CI.

- There is one test case per (surface, operation, check), failed with its violations.
- A check not exercised and a violation the baseline accepts are skipped.
- A stale baseline entry is skipped too, and failed under `--baseline-strict`.
- Each run error is an error case.
- The run's seed, versions and targets are properties.

Every text passes through the run's `Redactor`, so the file is always well-formed XML.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import Counter

from contract_tests.outcome.baseline import shown_fingerprint
from contract_tests.outcome.evidence import describe
from contract_tests.outcome.findings import Acceptance, BaselineRun, Key, Ledger
from contract_tests.redact import Redactor


def junit_xml(ledger: Ledger) -> bytes:
    """The JUnit document of `ledger` (see the module)."""
    shown = Redactor(ledger.secrets)
    failures = ledger.failures()
    accepted = _accepted_keys(ledger, failures)
    keys = sorted(set(ledger.passes) | set(failures) | set(accepted), key=lambda k: (k.surface, k.operation, k.check))
    run = ledger.run
    errors = [*map(str, ledger.errors), *([ledger.aborted] if ledger.aborted else [])]
    stale = _stale_entries(ledger.baseline)
    strict = ledger.baseline is not None and ledger.baseline.strict
    suite = ET.Element(
        "testsuite",
        name="shop-contract",
        tests=str(len(keys) + len(errors) + len(ledger.not_exercised) + len(stale)),
        failures=str(len(failures) + (len(stale) if strict else 0)),
        errors=str(len(errors)),
        skipped=str(len(ledger.not_exercised) + len(accepted) + (0 if strict else len(stale))),
        time=f"{run.duration:.3f}",
    )
    properties = ET.SubElement(suite, "properties")
    for name, value in _properties(ledger).items():
        ET.SubElement(properties, "property", name=name, value=shown(value))
    for key in keys:
        spent = run.timings.get(f"{key.surface}.{key.operation}", 0.0)
        classname = shown(f"{key.surface}.{key.operation}")
        case = ET.SubElement(suite, "testcase", classname=classname, name=shown(key.check), time=f"{spent:.3f}")
        found = [v for v in ledger.violations if Key(v.surface, v.operation, v.check) == key]
        if found:
            failure = ET.SubElement(case, "failure", message=shown(found[0].rule[:500]))
            failure.text = shown("\n\n".join(describe(n, v) for n, v in enumerate(found, 1)))
        elif key in accepted:
            count, reason = accepted[key]
            ET.SubElement(case, "skipped", message=shown(f"accepted by the baseline ({count}): {reason}"[:500]))
    for entry, why in stale:
        case = ET.SubElement(suite, "testcase", classname="baseline", name=shown(entry.fingerprint), time="0.000")
        said = f"{why}: {entry.reason}"[:500]
        ET.SubElement(case, "failure" if strict else "skipped", message=shown(said))
    for skip in ledger.not_exercised:
        classname = shown(f"{skip.surface}.{skip.operation}")
        case = ET.SubElement(suite, "testcase", classname=classname, name=shown(skip.check), time="0.000")
        ET.SubElement(case, "skipped", message=shown(skip.reason[:500]))
    for number, error in enumerate(errors, 1):
        case = ET.SubElement(suite, "testcase", classname="run", name=f"error-{number}", time="0.000")
        ET.SubElement(case, "error", message=shown(error[:500])).text = shown(error)
    document: bytes = ET.tostring(suite, encoding="utf-8", xml_declaration=True)
    return document


def _accepted_keys(ledger: Ledger, failures: Counter[Key]) -> dict[Key, tuple[int, str]]:
    """The (surface, operation, check) whose violations a baseline accepted, with none new.

    Each comes with their count and the first one's reason. JUnit shows each as a skipped test case. A key
    with new violations fails instead."""
    run = ledger.baseline
    if run is None:
        return {}
    reasons = {entry.fingerprint: entry.reason for entry in run.entries}
    accepted: dict[Key, tuple[int, str]] = {}
    for violation in run.accepted:
        key = Key(violation.surface, violation.operation, violation.check)
        if key not in failures:
            count, reason = accepted.get(key, (0, reasons.get(shown_fingerprint(ledger, violation), "")))
            accepted[key] = (count + 1, reason)
    return accepted


def _stale_entries(run: BaselineRun | None) -> list[tuple[Acceptance, str]]:
    """The baseline's entries not reproduced and expired, each saying which.

    They are JUnit test cases of class "baseline", failed under `--baseline-strict` and skipped otherwise."""
    if run is None:
        return []
    stale = [(entry, "not reproduced by this complete run") for entry in run.not_reproduced]
    return stale + [(entry, f"expired on {entry.expires}") for entry in run.expired]


def _properties(ledger: Ledger) -> dict[str, str]:
    run = ledger.run
    return {
        "seed": str(run.seed),
        "profile": run.profile,
        "suite_version": run.suite_version,
        "spec_version": run.spec_version,
        "duration": f"{run.duration:.3f}",
        "refused_credentials": str(run.refused_credentials),
        **({"shard": run.shard} if run.shard else {}),
        **({"shards": str(run.shards)} if run.shards else {}),
        **{f"target.{name}": url for name, url in run.targets.items()},
        **_baseline_properties(ledger.baseline),
    }


def _baseline_properties(run: BaselineRun | None) -> dict[str, str]:
    if run is None:
        return {}
    return {
        "baseline": run.file,
        "baseline.accepted": str(len(run.accepted)),
        "baseline.not_reproduced": str(len(run.not_reproduced)),
        "baseline.expired": str(len(run.expired)),
    }
