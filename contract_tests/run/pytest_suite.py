"""The suite inside a pytest session: one test per check (`shop-contract::<check>`), one run for all.

`contract_tests.pytest_plugin` registers it only when a target is given. The suite runs once, on the
first of its tests. Each test fails with the violations of its check.

A run may be unable to happen: an unreachable target, refused credentials or an unreadable spec. Then
the target is not probed again. The first test fails with the reason, and the others are skipped,
pointing to it.

With `--shop-baseline FILE`, the checks fail on new violations only. `shop-contract::baseline` fails
on what the baseline itself fails the CLI's run on. That is a prune refused, and under
`--shop-baseline-strict` also entries stale or expired.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from contract_tests.check_names import CONSUMER_CHECKS, DOMAIN_CHECKS, SCHEMATHESIS_CHECKS
from contract_tests.client.target import TargetError
from contract_tests.judge.consumer.document import ConsumerError
from contract_tests.judge.engine import ConformanceError
from contract_tests.options import Options
from contract_tests.outcome import baseline, export_tests, report, step_summary
from contract_tests.outcome.evidence import describe
from contract_tests.outcome.findings import Ledger
from contract_tests.redact import Redactor
from contract_tests.run import runner
from contract_tests.usage import UsageError
from shop_contract.document import SpecError

CANNOT_RUN = (UsageError, SpecError, TargetError, ConformanceError, ConsumerError)
REPLAY_CHECKS = tuple(check for check in CONSUMER_CHECKS if check != "consumer_revision")
"""A consumer contract's checks on a target. The plugin runs only with a target."""
BASELINE = "baseline"
"""The test of the baseline itself (`--shop-baseline FILE`), beside one per check."""


@dataclass
class Outcome:
    """The one run of the session: its ledger, or why it could not run and which test said so."""

    ledger: Ledger | None = None
    error: str | None = None
    reported_by: str | None = None
    baseline_notes: list[str] = field(default_factory=list)
    """What --baseline-update / --baseline-prune changed, or why the baseline could not be applied as asked."""
    baseline_refused: str | None = None
    unwritten: list[str] = field(default_factory=list)
    """Why a report or the exported tests could not be written: `run_completed` fails with it, as the CLI exits 2."""


class ContractSuite:
    """The plugin object registered for a session with a target."""

    def __init__(self, options: Options) -> None:
        """Reads the baseline the options name, if any. A bad one is a usage error before any test."""
        self.options = options
        self.gate = baseline.gate_of(options)
        self.outcome: Outcome | None = None

    def run_once(self) -> Outcome:
        if self.outcome is None:
            gate = self.gate
            try:
                ledger = runner.run(self.options, lambda line: None)
            except CANNOT_RUN as exc:
                self.outcome = Outcome(error=f"shop-contract could not run: {exc}")
            else:
                self.outcome = Outcome(ledger=ledger)
                if gate is not None:
                    try:
                        self.outcome.baseline_notes = baseline.settle(ledger, gate)
                    except UsageError as exc:
                        self.outcome.baseline_refused = str(exc)
                self.outcome.unwritten = self._written(ledger)
                step_summary.append(ledger, os.environ)  # A GitHub job's summary, as the CLI writes it.
        return self.outcome

    def _written(self, ledger: Ledger) -> list[str]:
        """The reports and the exported tests written; what could not be, said as the CLI says it. A full
        disk was a bare "[Errno 28]" as the first check's failure, and no job summary after it."""
        unwritten = []
        try:
            report.write(ledger, self.options)
        except OSError as exc:
            unwritten.append(f"cannot write the report: {exc}")
        if self.options.export_tests is not None:
            try:
                export_tests.write_run(ledger, self.options.export_tests, self.options.spec)
            except (OSError, ValueError) as exc:  # ValueError is export_tests.ExportError.
                unwritten.append(f"cannot write the exported tests: {exc}")
        return [Redactor(ledger.secrets)(line) for line in unwritten]

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        """The baseline's section of the CLI's summary (accepted, not reproduced, expired) and its notes."""
        outcome = self.outcome
        if outcome is None or outcome.ledger is None or outcome.ledger.baseline is None:
            return
        terminalreporter.section("shop-contract baseline")
        for line in [*outcome.baseline_notes, *report.baseline_lines(outcome.ledger, verbose=False)[1:]]:
            terminalreporter.write_line(Redactor(outcome.ledger.secrets)(line))

    def pytest_collection_modifyitems(
        self, session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        checks = ("run_completed", *SCHEMATHESIS_CHECKS, *DOMAIN_CHECKS, *sorted(self.options.enabled_strict))
        if self.options.consumer is not None:  # With `--shop-consumer FILE` the run is that contract's replay only.
            checks = ("run_completed", *REPLAY_CHECKS)
        if self.options.baseline is not None:
            checks = (*checks, BASELINE)
        items.extend(
            ContractCheck.from_parent(session, name=f"shop-contract::{check}", suite=self, check=check)
            for check in checks
        )


class ContractCheck(pytest.Item):
    """One check of the suite. It passes when the run found no violation of it."""

    def __init__(self, *, suite: ContractSuite, check: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.suite = suite
        self.check = check

    def runtest(self) -> None:
        outcome = self.suite.run_once()
        if outcome.error is not None:
            if outcome.reported_by is None:
                outcome.reported_by = self.name
                raise AssertionError(outcome.error)
            pytest.skip(f"not run: the suite could not run (see {outcome.reported_by})")
        ledger = outcome.ledger
        assert ledger is not None
        if self.check == BASELINE:
            refused = [outcome.baseline_refused] if outcome.baseline_refused else []
            refusals = [*refused, *baseline.strict_failures(ledger)]
            if refusals:
                raise AssertionError("\n".join(refusals))
            return
        if self.check == "run_completed" and not (ledger.complete and not outcome.unwritten):
            unreached = [f"not reached in the time budget (--shop-max-time): {part}" for part in ledger.unreached]
            stopped = [*([ledger.aborted] if ledger.aborted else []), *map(str, ledger.errors), *unreached]
            raise AssertionError("\n".join([*stopped, *outcome.unwritten]))
        found = [v for v in ledger.violations if v.check == self.check]
        if found:
            raise AssertionError("\n\n".join(describe(n, v) for n, v in enumerate(found, 1)))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        return str(excinfo.value)

    def reportinfo(self) -> tuple[Path, int, str]:
        return Path(__file__), 0, f"shop-contract::{self.check}"
