"""`shop-contract` / `python -m contract_tests`: options -> a run -> an exit code.

`shop-contract replay` sends a report's violations again. It exits 0 when all are fixed, 1 when any
still fails, and 2 when one could not be judged or the replay could not be made.

A run exits with one of these codes:

- 0: no violation.
- 1: violations found. With `--baseline` they are new ones. Under `--baseline-strict` an entry not
  reproduced or expired counts too.
- 2: the run could not start or could not finish. One line on stderr says why.
- 3: a partial verdict. There is no violation in what the time budget (`--max-time`) let the run reach.

Exit 2 has these causes:

- Bad arguments, an unreadable spec, or a target that is unreachable or not this API.
- Credentials refused or lost during the run, or an internal error.
- A part of the run that could not complete. Even with violations found, the verdict is then
  incomplete.
- A time budget that ended the run before anything was judged.
- Ctrl-C or SIGTERM. They end the run as a budget does, and they stop `merge` where it is
  (run/interrupts.py).

The reports are written whenever testing started.

The command line itself is `run/arguments.py`, shared with the pytest plugin. It holds the parsers,
reads secrets from the environment and makes the `Options`. The suite is imported by `main` only.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import threading
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from contract_tests.outcome import baseline
from contract_tests.outcome.findings import Ledger
from contract_tests.redact import Redactor, escape
from contract_tests.run.arguments import VersionAsked, merge_parser, options_from, replay_arguments
from contract_tests.run.interrupts import Interrupted, Interrupts, stop_here
from contract_tests.usage import UsageError
from shop_contract.document import SpecError

if TYPE_CHECKING:
    from contract_tests.options import Options
    from contract_tests.run.replay import Verdict

EXIT_OK, EXIT_VIOLATIONS, EXIT_CANNOT_RUN, EXIT_PARTIAL = 0, 1, 2, 3
INSECURE_WARNING = "shop-contract: warning: --insecure: TLS certificates are not verified; anyone between may answer"


_SAYING = threading.Lock()


def _say(line: str) -> None:
    """Print a progress line whole, because parts of a run side by side (run/scheduling.py) say theirs from threads."""
    with _SAYING:
        print(line, flush=True)


def _fail(message: str) -> int:
    print(f"shop-contract: error: {escape(message)}", file=sys.stderr)
    return EXIT_CANNOT_RUN


def verdict(ledger: Ledger) -> int:
    """The exit code of a finished (or stopped) run, with its one line on stderr when it is 2.

    A part of the run that could not complete makes the verdict incomplete. So it is 2, even with
    violations found.
    """
    shown = Redactor(ledger.secrets)
    if ledger.aborted:
        return _fail(shown(ledger.aborted))
    if ledger.errors:
        return _fail(shown(incomplete(ledger)))
    if ledger.unreached and not ledger.passes and not ledger.violations:
        return _fail(f"the time budget (--max-time) ended the run before anything was judged: {ledger.unreached[0]}")
    if baseline.fails(ledger):  # A new violation, or with --baseline-strict an entry stale or expired too.
        return EXIT_VIOLATIONS
    if ledger.unreached:
        print(f"shop-contract: partial verdict: {len(ledger.unreached)} part(s) not reached in time", file=sys.stderr)
        return EXIT_PARTIAL
    return EXIT_OK


def incomplete(ledger: Ledger) -> str:
    """One line saying how many parts could not complete, the first one's cause and request, and the other causes."""
    first, causes = ledger.errors[0], ledger.causes()
    on = f"{first.cause} on {first.request}" if first.request else f"{first.cause} in [{first.surface}] {first.where}"
    more = len(ledger.errors) - 1
    counted = ", ".join(f"{cause} {count}" for cause, count in causes.items())
    tail = f"and {more} more of {len(causes)} cause(s): {counted}; " if more else ""
    return f"{len(ledger.errors)} part(s) of the run could not complete; first: {on} ({tail}see Errors above)"


def merge(argv: Sequence[str]) -> int:
    """`shop-contract merge DIR... [--report-dir OUT] [--junit-xml FILE] [--baseline FILE]`: the shards' reports as one.

    Ctrl-C or SIGTERM stops it where it is (run/interrupts.py). It then says one line and exits 2, and
    each file is whole or not written."""
    return _stopped_where_it_is("the merge", partial(_merged, argv))


def _stopped_where_it_is(ending: str, command: Callable[[], int]) -> int:
    """`command()`, which a first Ctrl-C or SIGTERM stops where it is (`stop_here`): one line and exit 2."""
    try:
        with Interrupts(EXIT_CANNOT_RUN, ending=ending).installed() as interrupts:
            interrupts.on(stop_here)
            return command()
    except Interrupted as exc:
        return _fail(str(exc))


def _merged(argv: Sequence[str]) -> int:
    """The merge itself, its reports and its exit code."""
    from contract_tests.outcome import merge, report

    try:
        args = merge_parser().parse_args(argv)
        gate = _merge_gate(args)
        ledger = merge.combine([(directory, merge.read(directory)) for directory in args.directories])
    except (UsageError, merge.MergeError) as exc:
        return _fail(str(exc))
    if gate is None and ledger.baseline is not None:  # Use the shards' baseline, as they recorded it.
        shards = ledger.baseline
        gate = baseline.Gate(Path(shards.file), tuple(shards.entries), strict=shards.strict)
    refused = settled(ledger, gate)
    try:
        written = report.write_files(ledger, args.junit_xml, args.report_dir)
        written += _exported(ledger, args.export_tests, None)
    except OSError as exc:
        return _fail(f"cannot write the merged report: {exc}")
    except (SpecError, UsageError, ValueError) as exc:  # ValueError is export_tests.ExportError.
        return _fail(str(exc))
    _reported(ledger, written, args.verbose)
    return _fail(refused) if refused else verdict(ledger)


def _merge_gate(args: argparse.Namespace) -> baseline.Gate | None:
    """`merge --baseline FILE` and its flags, read before the shards are."""
    flags = {"--baseline-update": args.baseline_update, "--baseline-prune": args.baseline_prune}
    flags["--baseline-strict"] = args.baseline_strict
    given = [flag for flag, used in flags.items() if used]
    if args.baseline is None:
        if given:
            raise UsageError(f"{', '.join(given)} need(s) --baseline FILE")
        return None
    return baseline.open_gate(
        args.baseline, update=args.baseline_update, prune=args.baseline_prune, strict=args.baseline_strict
    )


def settled(ledger: Ledger, gate: baseline.Gate | None) -> str | None:
    """Apply the baseline, updated and pruned as asked, to the ledger, and say its notes on stdout.

    It returns why it could not be done as asked, if so. That is a prune of a run that cannot tell, or
    a file that cannot be written."""
    if gate is None:
        return None
    try:
        notes = baseline.settle(ledger, gate)
    except UsageError as exc:
        return str(exc)
    for note in notes:
        print(escape(note))
    return None


def _exported(ledger: Ledger, directory: Path | None, spec: Path | None) -> list[Path]:
    """`--export-tests DIR`: write the violations as a pytest file (outcome/export_tests.py), and return its path."""
    if directory is None:
        return []
    from contract_tests.outcome import export_tests

    return [export_tests.write_run(ledger, directory, spec)]


def replay(argv: Sequence[str]) -> int:
    """`shop-contract replay ID... --report-dir DIR` (or `--all`) says FIXED or STILL FAILING per violation.

    Ctrl-C or SIGTERM stops it where it is, as `merge`: the verdicts said by then, one line, exit 2, and
    the `--export-tests` file whole or not written."""
    return _stopped_where_it_is("the replay", partial(_replayed, argv))


def _replayed(argv: Sequence[str]) -> int:
    """The replay itself, its verdicts and its exit code."""
    from contract_tests.client.keyring import CredentialsLost
    from contract_tests.client.target import TargetError
    from contract_tests.run import replay as replaying
    from contract_tests.run import runner

    try:
        args = replay_arguments(argv)
    except UsageError as exc:
        return _fail(str(exc))
    secrets = Redactor(tuple(s for s in (args.api_key, args.token, args.client_secret) if s))
    counted: dict[str, int] = {}
    unjudged: list[replaying.Verdict] = []
    try:
        for found in replaying.replay(args, runner.run, lambda path: print(f"wrote {escape(str(path))}")):
            counted[found.outcome] = counted.get(found.outcome, 0) + 1
            unjudged += [found] if found.outcome == replaying.NOT_JUDGED else []
            print(secrets(_verdict_lines(found)), flush=True)
    except (replaying.ReplayError, UsageError, SpecError, TargetError, CredentialsLost) as exc:
        return _fail(secrets(str(exc)))
    except (OSError, ValueError) as exc:  # ValueError is export_tests.ExportError.
        return _fail(f"cannot write the exported tests: {exc}")
    except Exception as exc:  # The suite's own defect is still said in one line.
        return _fail(secrets(f"internal error of the suite: {type(exc).__name__}: {exc}"))
    print(", ".join(f"{count} {outcome}" for outcome, count in counted.items()) or "nothing replayed")
    if unjudged:
        first = unjudged[0]
        return _fail(
            secrets(f"{len(unjudged)} violation(s) could not be judged again; first: {first.id}: {first.rule}")
        )
    return EXIT_VIOLATIONS if counted.get(replaying.STILL_FAILING) else EXIT_OK


def _verdict_lines(found: Verdict) -> str:
    """`ID  OUTCOME  [surface] operation check`. When still failing, the rule broken and the answer follow."""
    from contract_tests.run.replay import NOT_JUDGED, STILL_FAILING

    v = found.violation
    head = f"{found.id}  {found.outcome:<13}  [{v.surface}] {v.operation} {v.check}"
    if found.outcome == NOT_JUDGED:
        return f"{head}: {found.rule}"
    if found.outcome != STILL_FAILING:
        return head
    evidence = "\n".join(f"    {line}" for line in f"rule: {found.rule}\n{found.response}".splitlines())
    return f"{head}\n{evidence}"


def _reported(ledger: Ledger, written: list[Path], verbose: bool) -> None:
    """Say which files were written, then the summary, which ends with the HTML report's path."""
    from contract_tests.outcome import report, step_summary

    for path in written:
        print(f"wrote {escape(str(path))}")
    html = next((path for path in written if path.name == report.HTML), None)
    print(report.summary(ledger, verbose=verbose, html=html))
    step_summary.append(ledger, os.environ)


def _escaping_output() -> None:
    """Write a character the terminal's encoding lacks as an escape, never raise it as an error of the suite.

    Such a character may be an accent a target sent, or the summary's "…" on an ASCII terminal."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    _escaping_output()
    if argv and argv[0] == "merge":
        return merge(argv[1:])
    if argv and argv[0] == "replay":
        return replay(argv[1:])
    from contract_tests import SUITE_VERSION

    try:
        options = options_from(argv)
        gate = baseline.gate_of(options)
    except VersionAsked:
        print(f"shop-contract {SUITE_VERSION}")
        return EXIT_OK
    except UsageError as exc:
        return _fail(str(exc))
    if options.insecure:
        print(INSECURE_WARNING, file=sys.stderr)
    with Interrupts(
        EXIT_CANNOT_RUN
    ).installed() as interrupts:  # Kept through the reports, so a second signal still stops at once.
        return _tested(options, gate, interrupts)


def _tested(options: Options, gate: baseline.Gate | None, interrupts: Interrupts) -> int:
    """The run, its reports and its exit code."""
    from contract_tests.client.keyring import CredentialsLost
    from contract_tests.client.target import TargetError
    from contract_tests.judge.consumer.document import ConsumerError
    from contract_tests.judge.engine import ConformanceError
    from contract_tests.outcome import report
    from contract_tests.run import runner

    secrets = Redactor(tuple(s for s in (options.api_key, options.token, options.client_secret) if s))
    progress = (lambda line: None) if options.quiet else (lambda line: _say(secrets(line)))
    try:
        ledger = runner.run(options, progress, interrupts)
    except (UsageError, SpecError, TargetError, ConformanceError, CredentialsLost, ConsumerError) as exc:
        return _fail(secrets(str(exc)))
    except KeyboardInterrupt:
        return _fail("interrupted")
    except Exception as exc:  # The suite's own defect before testing started is still one line.
        return _fail(secrets(f"internal error of the suite: {type(exc).__name__}: {exc}"))
    refused = settled(ledger, gate)
    try:
        written = report.write(ledger, options)
    except OSError as exc:  # The run is done, and said; its reports have no place (a full disk, a read-only one).
        _reported(ledger, [], options.verbose)
        return _fail(secrets(f"cannot write the report: {exc}"))
    try:
        written += _exported(ledger, options.export_tests, options.spec)
    except (OSError, ValueError) as exc:  # ValueError is export_tests.ExportError.
        _reported(ledger, written, options.verbose)
        return _fail(secrets(f"cannot write the exported tests: {exc}"))
    _reported(ledger, written, options.verbose)
    return _fail(refused) if refused else verdict(ledger)
