"""One run of the suite: options in, a ledger out. The CLI and the pytest plugin both call `run`.

Long because it is the one place where a run's parts are put in order: learning the target, the domain
tests and how they split, the Schemathesis runs, removing what was made. Split, the order would be
spread over modules that each import the judging below them, one level deeper each.

The order:
- load the contract, and build the target (credentials, reachability);
- learn what the target serves, making the items others must reference when it has none;
- the domain tests, deterministic on the target's state, in the order of the table `PER_SURFACE`;
- the Schemathesis phases, then the checks of concurrent writes (`LAST`);
- last, remove what was made.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial

from contract_tests import SUITE_VERSION
from contract_tests.check_names import ALL_CHECKS
from contract_tests.client.bounded_httpx import BoundedHttpx
from contract_tests.client.keyring import CredentialsLost
from contract_tests.client.pacing import BudgetSpent
from contract_tests.client.surface import Surface
from contract_tests.client.target import TargetError, build_target, never_stopped
from contract_tests.client.under_test import Target
from contract_tests.identities import Identities
from contract_tests.judge import conformance
from contract_tests.judge.canonical import Canonical
from contract_tests.judge.discovery import discover, remove_made
from contract_tests.judge.domain import (
    addressing,
    auth_matrix,
    bounds,
    encodings,
    fidelity,
    identifier_variants,
    immutability,
    lifecycle,
    locality,
    ordering,
    pagination,
    race_references,
    races,
    referential,
    request_shapes,
    surfaces,
    unknown,
)
from contract_tests.judge.domain.data import Context
from contract_tests.judge.domain.http import Abandoned, Session, Unreachable
from contract_tests.judge.engine import Plan, plans
from contract_tests.judge.known import Known
from contract_tests.judge.run_context import Progress, RunContext
from contract_tests.options import Options
from contract_tests.outcome import documented, reproduce
from contract_tests.outcome.findings import ConsumerRun, Ledger, RunInfo
from contract_tests.run import scheduling
from contract_tests.run.guard import guarded, run_error
from contract_tests.run.interrupts import Interrupts
from contract_tests.sharding import derived_seed
from contract_tests.spec import Spec
from contract_tests.usage import UsageError

DomainTest = Callable[[Context, Session], None]
"""One domain test on one surface; `surfaces.run` needs both surfaces and is called apart."""

PER_SURFACE: dict[str, DomainTest] = {
    "auth_matrix": auth_matrix.run,
    "pagination_walk": pagination.run,
    "lifecycle": lifecycle.run,
    "body_encodings": encodings.run,
    "referential_rules": referential.run,
    "invalid_values_rejected": bounds.run,
    "identifier_addressable": addressing.run,
    "identifier_immutable": immutability.run,
    "patch_locality": locality.run,
    "read_back": fidelity.run,
    "unknown_not_found": unknown.run,
    "list_order": ordering.run,
    "identifier_variants": identifier_variants.run,
    "request_shapes": request_shapes.run,
    **races.TESTS,
    **race_references.TESTS,
}
LAST = frozenset({*races.TESTS, *race_references.TESTS})
"""The checks of concurrent writes, run after the Schemathesis phases. Which of a race's requests wins
decides what it leaves behind for a moment, and the stateful phase, run after them, generated other
cases from one run of a seed to the next."""
Split = Callable[[Context, Spec], list[Context]]
ALONE: dict[str, Split] = {
    "pagination_walk": scheduling.parts,  # it only reads: one piece per list
    "referential_rules": scheduling.unlinked,
    "identifier_addressable": scheduling.parts,  # a refused create leaves its collection's count as it was
    "read_back": scheduling.parts,  # an item's lists show its collection's items, which only its piece writes
    "list_order": scheduling.unlinked,  # a product line's sub-list shows the products another piece makes
}
"""Tests that read whole lists or a list's count: nothing else may write there while they run. Each is cut
into the pieces named here, which cannot see each other's writes and run side by side. A piece of one of
them waits for every piece listed before it that reads or writes its groups of linked collections
(`scheduling.footprint`), and every such piece listed after it waits for it. The others write only
items they made: they wait only for the pieces of these."""


def open_session(surface: Surface, ledger: Ledger, target: Target) -> Session:
    """A domain test's session on `surface`, through a bounded httpx client with the target's credentials."""
    return Session(surface, ledger, BoundedHttpx(target.limits), target.keyring)


def learn(spec: Spec, target: Target, identities: Identities, ledger: Ledger) -> tuple[Known, Session]:
    """What the target serves (making what is missing, e.g. on an empty target), and the session that
    will remove what was made, on the backend (else the gateway). An answer too slow or too large is
    recorded as its violation, and the run goes on knowing nothing; credentials lost set `ledger.aborted`,
    and the run ends with its reports."""
    surface = target.surface("backend") or target.surfaces[0]
    maker = open_session(surface, ledger, target)
    try:
        return discover(spec, maker, identities), maker
    except Abandoned as exc:
        ledger.skipped(surface.name, "-", "discovery", f"not finished: {exc}")
        return Known(identities), maker
    except BudgetSpent:
        ledger.unreached.append(f"[{surface.name}] discovery")
        return Known(identities), maker
    except CredentialsLost as exc:  # e.g. a static token that expired: the run ends here, with its reports
        ledger.aborted = str(exc)
        return Known(identities), maker
    except Unreachable as exc:
        maker.close()
        raise TargetError(str(exc)) from exc


def run_domain(run_ctx: RunContext, ctx: Context, last: bool = False) -> None:
    """The domain tests on each surface, in pieces (`_side_by_side`: one at a time with one worker, the
    same pieces whatever the number of workers); then surface parity. With `last`, the tests of `LAST`
    alone; without, every other one."""
    options, target, ledger = run_ctx.options, run_ctx.target, run_ctx.ledger
    plan = []
    for surface in target.surfaces:
        tests = [name for name in PER_SURFACE if (name in LAST) == last]
        tests = [name for name in tests if name not in ALL_CHECKS or options.selects(name)]
        if tests:
            plan.append((surface, tests))
    _side_by_side(run_ctx, ctx, plan)
    backend, gateway = target.surface("backend"), target.surface("gateway")
    if not last and backend is not None and gateway is not None and options.selects("surface_parity"):
        run_ctx.progress("[gateway] surface_parity")
        sessions = [open_session(surface, ledger, target) for surface in (backend, gateway)]
        try:
            guarded(ledger, "gateway", "surface_parity", partial(surfaces.run, ctx, *sessions))
        finally:
            for session in sessions:
                session.close()


@dataclass(frozen=True)
class Piece:
    """A part of a domain test on a surface: what it may run beside (`footprint`, `alone`)."""

    surface: Surface
    name: str
    part: Context
    footprint: frozenset[str] | None
    """The groups of linked collections it reads or writes (`scheduling.footprint`); None for all."""

    @property
    def alone(self) -> bool:
        return self.name in ALONE

    def waits_for(self, earlier: Piece) -> bool:
        """Whether this piece must start after `earlier` ends: they share a group, one of them reads whole
        lists (`ALONE`), and they are not pieces of one test on one surface, which its split keeps apart."""
        if not (self.alone or earlier.alone):
            return False
        if (self.surface.name, self.name) == (earlier.surface.name, earlier.name):
            return False
        return self.footprint is None or earlier.footprint is None or bool(self.footprint & earlier.footprint)


def listed(ctx: Context, plan: list[tuple[Surface, list[str]]]) -> list[Piece]:
    """The pieces of `plan`'s tests (`_split`), in the order one worker runs them: the tests that read
    whole lists (`ALONE`), surface by surface, then the others, surface by surface.

    The gateway serves the customers, whose lists the backend's other tests write. When the gateway's
    list readers came after those, they waited for them, and everything on the customers waited for
    the gateway's list readers. That was one chain of requests through the whole domain round on a far
    target."""
    group = scheduling.groups(ctx.spec)
    return [
        Piece(surface, name, part, scheduling.footprint(part, ctx.spec, group))
        for alone in (True, False)
        for surface, tests in plan
        for name in tests
        if (name in ALONE) == alone
        for part in _split(name)(ctx, ctx.spec)
    ]


def _side_by_side(run_ctx: RunContext, ctx: Context, plan: list[tuple[Surface, list[str]]]) -> None:
    """The domain tests of `plan` (surfaces and their tests), each split in pieces, in the order `listed`
    gives. Up to `workers` pieces run at once, each starting once the pieces listed before it that it
    waits for (`Piece.waits_for`) have ended: with one worker, in the list's order. What the pieces find
    is added up in the table's order, whatever ran first; what each piece sends is recorded as the part
    "surface test piece" (`scheduling.piece_name`)."""
    ledger, workers = run_ctx.ledger, run_ctx.options.workers or 1
    pieces = listed(ctx, plan)
    waits = [frozenset(m for m in range(n) if piece.waits_for(pieces[m])) for n, piece in enumerate(pieces)]
    gone = {surface.name: threading.Event() for surface, _ in plan}
    shared = {surface.name: open_session(surface, ledger, run_ctx.target) for surface, _ in plan}
    canonical = {
        surface.name: Canonical(ctx.known.identities, [surface.base_url], surface.headers) for surface, _ in plan
    }
    started: set[tuple[str, str]] = set()
    lock = threading.Lock()

    def run_piece(piece: Piece) -> Session:
        surface = piece.surface.name
        with lock:  # each test's progress line once, as its first piece starts
            if (surface, piece.name) not in started:
                started.add((surface, piece.name))
                run_ctx.progress(f"[{surface}] {piece.name}")
        own = ledger.part()
        record = own.generation(f"{surface} {piece.name} {scheduling.piece_name(piece.part)}")
        session = shared[surface].reporting_to(own, (record, canonical[surface]))
        return _piece(piece.part, session, piece.name, gone[surface])

    try:
        work = [partial(run_piece, piece) for piece in pieces]
        done = scheduling.in_order(work, workers, waits)
    finally:
        for session in shared.values():
            session.close()
    found: dict[tuple[str, str], list[Ledger]] = {}
    for piece, session in zip(pieces, done, strict=True):
        found.setdefault((piece.surface.name, piece.name), []).append(session.ledger)
    for surface, tests in plan:
        for name in tests:
            for part in found.get((surface.name, name), []):
                ledger.absorb(part)


CHAINS: dict[str, Split] = {"patch_locality": scheduling.per_encoding, "invalid_values_rejected": scheduling.per_write}
"""Tests cut finer than `scheduling.parts`: one piece per chain of requests they run one after another."""


def _split(name: str) -> Split:
    """How a domain test is cut into pieces that may run side by side."""
    return ALONE.get(name) or CHAINS.get(name, scheduling.parts)


def _piece(ctx: Context, session: Session, name: str, gone: threading.Event) -> Session:
    """A part of a domain test, on `session` (into its own ledger); none once the surface stopped
    answering or the time budget is spent."""
    surface = session.surface.name
    pacer = session.limits.pacer
    if gone.is_set():
        session.ledger.skipped(surface, "-", name, "not run: the surface stopped answering")
    elif pacer is not None and pacer.spent:
        session.ledger.unreached.append(f"[{surface}] {name}")
    elif not guarded(session.ledger, surface, name, partial(PER_SURFACE[name], ctx, session)):
        gone.set()
    return session


def seeded(options: Options, spec: Spec, progress: Progress) -> Options:
    """A shard without `--seed` takes the seed every shard of its run derives alike (sharding.derived_seed)."""
    if options.shard is None or options.seed is not None:
        return options
    seed = derived_seed(spec, options.shard.count)
    progress(f"seed: {seed} (derived from the spec digest and {options.shard.count} shards; --seed overrides)")
    return replace(options, seed=seed)


def run(options: Options, progress: Progress, interrupts: Interrupts | None = None) -> Ledger:
    """Test the target the options describe; raises for what makes a run impossible.

    Once testing started, nothing escapes. A check that fails to run is recorded in the ledger. Lost
    credentials, an internal error or a signal (`interrupts`) stop the run with `ledger.aborted` set.
    Either way the ledger is returned, so that the reports are written.
    """
    with reproduce.for_bash():
        if options.consumer is not None:
            return run_consumer(options, progress, interrupts)
        return _run(options, progress, interrupts)


def _run(options: Options, progress: Progress, interrupts: Interrupts | None) -> Ledger:
    started = time.monotonic()
    spec = Spec.load(options.spec)
    unknown = set(options.include) - set(spec.operations)
    if unknown:
        raise UsageError(f"unknown operation(s) for --include: {', '.join(sorted(unknown))}")
    options = seeded(options, spec, progress)
    target = build_target(options, spec, _stopped(interrupts))
    _stoppable(target, started + options.max_time if options.max_time is not None else None, interrupts)
    ledger = Ledger(secrets=target.keyring.secrets(), run=run_info(options, spec, target))
    for surface in target.surfaces:
        in_scope = [name for name in surface.operations if not options.include or name in options.include]
        documented.plan(ledger.coverage, spec, surface.name, in_scope)
    if options.shard is not None:
        progress(f"shard {options.shard}")
    progress(f"seed {options.seed_value}; surfaces: {', '.join(s.name + ' ' + s.base_url for s in target.surfaces)}")
    _on_target(spec, target, ledger, partial(_test, RunContext(spec, options, target, ledger, progress)))
    return _finished(ledger, options, started, target)


def _stopped(interrupts: Interrupts | None) -> Callable[[], str | None]:
    """Why the run was stopped before its pacer was made (a signal while `--wait` lasts), or None."""
    return never_stopped if interrupts is None else lambda: interrupts.reason


def _stoppable(target: Target, stop_at: float | None, interrupts: Interrupts | None) -> None:
    """The run's budget (a `time.monotonic()` to stop at) and its signals, on the pacer every request passes."""
    pacer = target.limits.pacer
    if pacer is not None:
        pacer.stop_at = stop_at
        if interrupts is not None:
            interrupts.on(pacer.stop)


def _on_target(spec: Spec, target: Target, ledger: Ledger, test: Callable[[Known], None]) -> None:
    """Learn what the target serves, `test` it, and remove what was made, whatever happens: lost
    credentials or the suite's own defect stop the run with `ledger.aborted` set, never a crash."""
    known, maker = learn(spec, target, Identities(), ledger)
    ledger.prelude = tuple(known.setup)
    try:
        if ledger.aborted is None:
            test(known)
    except CredentialsLost as exc:
        ledger.aborted = str(exc)
    except Exception as exc:  # the suite's own defect: still a report, and exit 2
        ledger.aborted = f"internal error of the suite: {type(exc).__name__}: {exc}"
    finally:
        with contextlib.suppress(Exception):  # best effort: the run already says why it stopped, if it did
            remove_made(maker, known)
        maker.close()


def _finished(ledger: Ledger, options: Options, started: float, target: Target | None = None) -> Ledger:
    """The ledger with only the selected checks' verdicts, the run's duration and, given a target, what
    its credentials met."""
    ledger.keep_only(options.selects)
    ledger.run.duration = time.monotonic() - started
    if target is not None:
        ledger.run.refused_credentials = target.keyring.refused
        ledger.secrets = target.keyring.secrets()
        if target.limits.pacer is not None:
            ledger.aborted = ledger.aborted or target.limits.pacer.stopped_by
    return ledger


def run_consumer(options: Options, progress: Progress, interrupts: Interrupts | None = None) -> Ledger:
    """`--consumer FILE`: the contract replayed on the target (after learning what it serves, as a run
    does), or, without a target, read against the spec alone (contract_tests/judge/consumer/)."""
    from contract_tests.judge.consumer import document, replay, revision
    from shop_contract.document import digest

    assert options.consumer is not None
    started = time.monotonic()
    contract = document.load(options.consumer)
    spec = revision.load_spec(options.spec)
    against = "spec" if options.base_url is None and options.gateway_url is None else "backend"
    consumer = ConsumerRun(
        contract.consumer,
        str(options.consumer),
        against,
        contract.recorded_spec,
        contract.spec_digest == digest(spec.raw),
        bool(contract.raw["journal_full"]),
    )
    if against == "spec":
        ledger = Ledger(consumer=consumer, run=run_info(options, spec))
        revision.check(spec, contract, ledger, progress)
        return _finished(ledger, options, started)
    target = build_target(options, spec, _stopped(interrupts))
    _stoppable(target, None, interrupts)
    ledger = Ledger(secrets=target.keyring.secrets(), consumer=consumer, run=run_info(options, spec, target))

    def verify(known: Known) -> None:
        sessions = {surface.name: open_session(surface, ledger, target) for surface in target.surfaces}
        try:
            replay.verify(spec, sessions, contract, known, ledger, progress)
        except Unreachable as exc:
            ledger.errors.append(run_error(target.surfaces[0].name, "consumer", exc, str(exc)))
        finally:
            for each in sessions.values():
                each.close()

    _on_target(spec, target, ledger, verify)
    return _finished(ledger, options, started, target)


def run_info(options: Options, spec: Spec, target: Target | None = None) -> RunInfo:
    """What the reports say of the run, to repeat it: the one place a `RunInfo` is made. A consumer
    contract's run has no seed, profile, shard, budget or narrowing: it replays what was recorded."""
    info = RunInfo(
        targets={} if target is None else {surface.name: surface.base_url for surface in target.surfaces},
        suite_version=SUITE_VERSION,
        spec_version=str(spec.raw.get("info", {}).get("version", "")),
        command=reproduce.command(options),
    )
    if options.consumer is not None:
        return info
    shard = None if options.shard is None else str(options.shard)
    narrowed = list(options.narrowing)
    return replace(
        info,
        seed=options.seed_value,
        profile=options.profile,
        shard=shard,
        max_time=options.max_time,
        narrowed=narrowed,
    )


def _test(run_ctx: RunContext, known: Known) -> None:
    spec, target = run_ctx.spec, run_ctx.target
    surface = target.surface("backend") or target.surfaces[0]
    with scheduling.capacity_probe(spec, surface, target.limits, target.keyring) as probe:
        run_ctx = run_ctx.resized(
            scheduling.sized(run_ctx.options, target.limits.pacer, run_ctx.ledger, run_ctx.progress, probe)
        )
    options = run_ctx.options
    if options.domain:
        ctx = Context(spec, known, options.enabled_strict, frozenset(options.include), race_tries=options.race_tries)
        if not options.part.whole:
            ctx.shard_operations = options.part.operations(spec)
            ctx.shard_collections = options.part.collections(spec)
        run_domain(run_ctx, ctx)
    if options.conformance:
        run_conformance(run_ctx, target.surfaces, known)
    if options.domain:
        run_domain(run_ctx, ctx, last=True)


def run_conformance(run_ctx: RunContext, surfaces: Sequence[Surface], known: Known) -> None:
    """The Schemathesis phases on every surface, in the engine runs `plans` makes for each.

    They are each stateless phase, the coverage phase's shares and each collection's stateful phase. Up
    to `options.workers` run at once, each into its own ledger, added up in plan order, surface by
    surface. Every surface's stateful phases start first: a chain of requests one after another is a
    run's longest part behind a network, and one started last ends the run alone. When the surfaces
    took turns, the gateway's chains started once the backend's runs had all ended."""
    planned = [(surface, plan) for surface in surfaces for plan in plans(run_ctx.spec, run_ctx.options, surface)]
    order = sorted(range(len(planned)), key=lambda n: not planned[n][1].stateful)
    work = [partial(_conformance_part, run_ctx, *planned[n], known) for n in order]
    found = dict(zip(order, scheduling.in_order(work, run_ctx.options.workers or 1), strict=True))
    for n in range(len(planned)):
        run_ctx.ledger.absorb(found[n])


def _conformance_part(run_ctx: RunContext, surface: Surface, plan: Plan, known: Known) -> Ledger:
    """One engine run, into a ledger of its own."""
    own = run_ctx.ledger.part()
    engine = partial(conformance.run, run_ctx.reporting_to(own), surface, known, plan)
    guarded(own, surface.name, "schemathesis", engine)
    return own
