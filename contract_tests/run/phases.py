"""The Schemathesis phases of a run on one surface: one engine run with one worker; with more, the
stateless phases and each collection's stateful phase side by side, their verdicts merged in plan order."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from contract_tests.client.surface import Surface
from contract_tests.client.target import Target
from contract_tests.judge import conformance
from contract_tests.judge.engine import Plan, plans
from contract_tests.judge.known import Known
from contract_tests.options import Options
from contract_tests.outcome.findings import Ledger
from contract_tests.run import scheduling
from contract_tests.run.guard import guarded
from contract_tests.spec import Spec

Progress = Callable[[str], None]


def run_conformance(
    spec: Spec, target: Target, options: Options, surface: Surface, known: Known, ledger: Ledger, progress: Progress
) -> None:
    """The Schemathesis phases on `surface`: with one worker, one engine run; with more, the stateless
    phases and each collection's stateful phase side by side (a stateful chain is one thread's)."""
    workers = options.workers or 1
    planned_runs = plans(spec, options, surface, apart=workers > 1)

    def planned(plan: Plan, own: Ledger) -> Ledger:
        phases = partial(conformance.run, spec, options, surface, known, own, progress, target.limits, target.keyring)
        guarded(own, surface.name, "schemathesis", partial(phases, plan))
        return own

    if workers == 1:
        for plan in planned_runs:
            planned(plan, ledger)
        return
    for found in scheduling.in_order([partial(planned, plan, ledger.part()) for plan in planned_runs], workers):
        ledger.absorb(found)
