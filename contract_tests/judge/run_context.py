"""The run object: what one run of the suite is, handed to every call instead of its five values.

The five are the spec, the options, the target, the ledger the verdicts go to and the progress line.
They are known once the target is built, and run/runner.py builds this object then. Every part of the
run reads them from here, as Schemathesis' engine reads its own state from one context.

It is frozen. A part of the run that needs another ledger or resized options gets a copy (`reporting_to`,
`resized`), so that parts running side by side never share one by accident.

It lives in the judging, the lowest layer that may see both the target (client/) and the ledger
(outcome/).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from contract_tests.client.under_test import Target
from contract_tests.options import Options
from contract_tests.outcome.findings import Ledger
from contract_tests.spec import Spec

Progress = Callable[[str], None]
"""Where a run says what it is doing, one line at a time."""


@dataclass(frozen=True)
class RunContext:
    """One run: the contract, the options, the target, where its verdicts go and what it says it does."""

    spec: Spec
    options: Options
    target: Target
    ledger: Ledger
    progress: Progress

    def reporting_to(self, ledger: Ledger) -> RunContext:
        """This run, its verdicts going to `ledger`. That is a part of the run, added up by the caller."""
        return replace(self, ledger=ledger)

    def resized(self, options: Options) -> RunContext:
        """This run with `options`. It is the same run, its workers sized to what the target keeps up with."""
        return replace(self, options=options)
