"""The GitHub Actions job summary. When GITHUB_STEP_SUMMARY names a file, a short Markdown summary is
appended to it: the verdict, the counts, the coverage figure and the first violations with their curl.

The reports are written whole through a temporary file renamed over the old one. The summary is
appended instead, because the file is the job's. Other steps, and other commands of this one, add to
it, and a rename would drop what they wrote. The summary is still added whole or not at all
(outcome/files.py, `append`). A half summary could leave a Markdown fence open, swallowing what the
job adds after it.

What a target sent is already redacted: secrets are masked and controls escaped. Here it is also kept
from acting as Markdown or HTML.
- Table cells and headings have their Markdown and HTML characters escaped.
- Curl commands sit in fenced blocks whose fence is longer than any backtick run inside them.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from pathlib import Path

from contract_tests.outcome import files
from contract_tests.outcome.baseline import shown_fingerprint, strict_failures
from contract_tests.outcome.findings import Ledger
from contract_tests.outcome.fingerprint import violation_id
from contract_tests.redact import Redactor

VARIABLE = "GITHUB_STEP_SUMMARY"
SHOWN = 5
"""Violations shown with their curl. The rest are in report.html."""
_MARKDOWN = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>&~])")


def inline(text: str) -> str:
    """`text` safe in a Markdown table cell or heading. It is one line, with every special character escaped."""
    return _MARKDOWN.sub(r"\\\1", " ".join(text.split()))


def fenced(text: str) -> str:
    """`text` in a fenced code block no backtick run of it can close."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}sh\n{text}\n{fence}"


def markdown(ledger: Ledger) -> str:
    shown = Redactor(ledger.secrets)
    failures = ledger.failures()
    partial = f" (partial: the time budget left {len(ledger.unreached)} part(s) unreached)" if ledger.unreached else ""
    new = "new " if ledger.baseline is not None else ""
    if ledger.aborted:
        verdict = "⛔ stopped before its end"
    elif ledger.violations:
        verdict = f"❌ {len(ledger.violations)} {new}violation(s) of {len(ledger.violated_checks())} check(s)"
    elif strict_failures(ledger):
        verdict = f"❌ no {new}violation, but the baseline has entries not reproduced or expired (--baseline-strict)"
    else:
        verdict = f"✅ no {new}violation" + (" (but parts of the run could not complete)" if ledger.errors else "")
    if partial and not ledger.aborted:
        verdict = verdict.replace("✅", "⚠️") + partial
    lines = [
        f"### shop-contract: {verdict}",
        "",
        f"- checks judged: {len(ledger.exercised())}; verdicts passed: {sum(ledger.passes.values())}; "
        f"violations: {len(ledger.violations)}; not exercised: {len(ledger.not_exercised)}; "
        f"errors: {len(ledger.errors)}",
        f"- {inline(ledger.coverage.headline())}",
        "- the full report: report.html in the job's report artifact",
    ]
    if failures:
        lines += ["", "| surface | operation | check | violations |", "|---|---|---|---|"]
        for key in sorted(failures, key=lambda k: (k.surface, k.operation, k.check)):
            cells = (inline(shown(key.surface)), inline(shown(key.operation)), inline(shown(key.check)))
            lines.append(f"| {' | '.join(cells)} | {failures[key]} |")
    for number, violation in enumerate(ledger.violations[:SHOWN], 1):
        title = (
            f"{number}. [{violation.check}] {violation.surface} {violation.operation} (id {violation_id(violation)})"
        )
        lines += [
            "",
            f"**{inline(shown(title))}**: {inline(shown(violation.rule)[:500])}",
            "",
            fenced(shown(violation.curl)),
        ]
    if len(ledger.violations) > SHOWN:
        lines += ["", f"… and {len(ledger.violations) - SHOWN} more in report.html."]
    return "\n".join([*lines, *_baseline(ledger)]) + "\n"


def _baseline(ledger: Ledger) -> list[str]:
    """The baseline's part. First its counts, then a table of the entries this run met or should hear
    about (accepted, not reproduced, expired), the first `SHOWN` of each."""
    run = ledger.baseline
    if run is None:
        return []
    shown = Redactor(ledger.secrets)
    lines = [
        "",
        f"#### Baseline {inline(shown(run.file))}",
        "",
        f"- accepted: {len(run.accepted)} violation(s); not reproduced: {len(run.not_reproduced)} entry(ies)"
        + ("" if run.judged else " (not judged: a narrowed or incomplete run)")
        + f"; expired: {len(run.expired)}",
    ]
    accepted: dict[str, int] = {}
    for violation in run.accepted:
        fingerprint = shown_fingerprint(ledger, violation)
        accepted[fingerprint] = accepted.get(fingerprint, 0) + 1
    reasons = {entry.fingerprint: entry.reason for entry in run.entries}
    rows = [(f"accepted ({count})", fp, reasons.get(fp, "")) for fp, count in list(accepted.items())[:SHOWN]]
    rows += [("not reproduced", entry.fingerprint, entry.reason) for entry in run.not_reproduced[:SHOWN]]
    rows += [(f"expired {entry.expires}", entry.fingerprint, entry.reason) for entry in run.expired[:SHOWN]]
    if rows:
        lines += ["", "| entry | fingerprint | reason |", "|---|---|---|"]
        cells = [(inline(state), inline(shown(fp)[:300]), inline(shown(why)[:300])) for state, fp, why in rows]
        lines += [f"| {' | '.join(row)} |" for row in cells]
    return lines


def append(ledger: Ledger, environ: Mapping[str, str]) -> None:
    """Append the summary to the file GITHUB_STEP_SUMMARY names, if it is set. A file that cannot be
    written is said on stderr and is never fatal, because the run's own reports are written already."""
    path = environ.get(VARIABLE)
    if not path:
        return
    try:
        files.append(Path(path), markdown(ledger).encode("utf-8"))
    except OSError as exc:
        print(f"shop-contract: warning: cannot append to {VARIABLE} ({exc.strerror or exc})", file=sys.stderr)
