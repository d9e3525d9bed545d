"""The Schemathesis part of a run: every phase (examples, coverage, fuzzing, stateful) on one surface.

Each plan (judge/engine.py) is one run of the engine, configured in code. Its events become entries of
the shared ledger (judge/verdicts.py). Once the run's time budget is spent the engine is stopped, and
what it did not reach is said.
"""

from __future__ import annotations

from typing import Any

from contract_tests.client.keyring import CredentialsLost
from contract_tests.client.pacing import BudgetSpent
from contract_tests.client.surface import Surface
from contract_tests.judge.engine import ConformanceError, Plan, load_schema, plans
from contract_tests.judge.known import Known
from contract_tests.judge.run_context import RunContext
from contract_tests.judge.verdicts import cause, non_fatal, record
from contract_tests.schemathesis_seam import Status, events, from_schema


def run(run_ctx: RunContext, surface: Surface, known: Known, plan: Plan | None = None) -> None:
    """Run `plan`, or by default every plan of `surface` in turn (see `plans`).

    Its requests go through the target's limits (`client.target.limits_of`): the run's bounds, pacer and
    budget."""
    ledger, pacer = run_ctx.ledger, run_ctx.target.limits.pacer
    for each in [plan] if plan is not None else plans(run_ctx.spec, run_ctx.options, surface):
        if pacer is not None and pacer.spent:  # Said as a stopped engine says it (`execute`).
            ledger.unreached.append(f"[{surface.name}] schemathesis: every phase")
            return
        schema = load_schema(run_ctx, surface, each, known, ledger.generation(f"{surface.name} {each.part}"))
        execute(run_ctx, surface, schema)


def execute(run_ctx: RunContext, surface: Surface, schema: Any) -> None:
    """Run the phases `schema` is configured for, with its events into the run's ledger.

    Once the run's time budget is spent, the engine is stopped. What it did not reach is listed in
    `ledger.unreached`."""
    spec, options, ledger, progress = run_ctx.spec, run_ctx.options, run_ctx.ledger, run_ctx.progress
    pacer = run_ctx.target.limits.pacer
    stream = from_schema(schema).execute()
    phase, stopped = "", False
    for event in stream:
        if pacer is not None and pacer.spent and not stopped:
            stream.stop()
            stopped = True
            left = f"the rest of the {phase} phase and the phases after it" if phase else "every phase"
            ledger.unreached.append(f"[{surface.name}] schemathesis: {left}")
        if isinstance(event, events.PhaseStarted):
            phase = event.phase.name.value
            progress(f"[{surface.name}] {phase} phase")
        elif isinstance(event, events.ScenarioFinished):
            record(spec, surface, event.recorder, ledger, options.enabled_strict)
            if event.label:
                op = spec.by_label(event.label)
                ledger.run.spent(surface.name, op.id if op is not None else event.label, event.elapsed_time)
            if event.label and event.status != Status.SKIP:
                progress(f"[{surface.name}]   {event.label}: {event.status.value}")
        elif isinstance(event, events.NonFatalError):
            if cause(event.value, BudgetSpent) is None:
                non_fatal(spec, options, surface, event, ledger)
        elif isinstance(event, events.FatalError):
            if isinstance(event.exception, CredentialsLost):
                raise event.exception
            raise ConformanceError(f"Schemathesis stopped: {event.exception}") from event.exception
