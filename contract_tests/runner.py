"""One run of the suite: options in, a ledger out. The CLI and the pytest plugin both call `run`.

Order: load the contract, build the target (credentials, reachability), learn what the target serves
(making the items others must reference when it has none), then the domain tests (deterministic, on
the target's state) and the Schemathesis phases; last, remove what was made.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable

from contract_tests import conformance
from contract_tests.domain import PER_SURFACE, surfaces
from contract_tests.domain.data import Context
from contract_tests.domain.http import Session, Unreachable
from contract_tests.findings import Ledger
from contract_tests.identities import Identities
from contract_tests.known import Known, discover, remove_made
from contract_tests.options import Options, UsageError
from contract_tests.spec import Spec
from contract_tests.target import Target, TargetError, build_target

Progress = Callable[[str], None]


def learn(spec: Spec, target: Target, identities: Identities, timeout: float) -> tuple[Known, Session]:
    """What the target serves (making what is missing, e.g. on an empty target), and the session that
    will remove what was made, on the backend (else the gateway)."""
    surface = target.surface("backend") or target.surfaces[0]
    session = Session(surface, Ledger(), timeout)
    try:
        return discover(spec, session, identities), session
    except Unreachable as exc:
        session.close()
        raise TargetError(str(exc)) from exc


def run_domain(ctx: Context, target: Target, options: Options, ledger: Ledger, progress: Progress) -> None:
    sessions = {surface.name: Session(surface, ledger, options.request_timeout) for surface in target.surfaces}
    try:
        for session in sessions.values():
            for name, test in PER_SURFACE.items():
                progress(f"[{session.surface.name}] {name}")
                test(ctx, session)
        if "backend" in sessions and "gateway" in sessions:
            progress("[gateway] surface_parity")
            surfaces.run(ctx, sessions["backend"], sessions["gateway"])
    except Unreachable as exc:
        ledger.errors.append(f"the target stopped answering: {exc}")
    finally:
        for session in sessions.values():
            session.close()


def run(options: Options, progress: Progress) -> Ledger:
    """Test the target the options describe; raises for what makes a run impossible."""
    spec = Spec.load(options.spec)
    unknown = set(options.include) - set(spec.operations)
    if unknown:
        raise UsageError(f"unknown operation(s) for --include: {', '.join(sorted(unknown))}")
    target = build_target(options, spec)
    known, maker = learn(spec, target, Identities(), options.request_timeout)
    ledger = Ledger()
    progress(f"seed {options.seed_value}; surfaces: {', '.join(s.name + ' ' + s.base_url for s in target.surfaces)}")
    try:
        if options.domain:
            ctx = Context(spec, known, options.enabled_strict, frozenset(options.include))
            run_domain(ctx, target, options, ledger, progress)
        if options.conformance:
            for surface in target.surfaces:
                conformance.run(spec, options, surface, known, ledger, progress)
    finally:
        with contextlib.suppress(Unreachable):  # the run already says the target stopped answering
            remove_made(maker, known)
        maker.close()
    return ledger
