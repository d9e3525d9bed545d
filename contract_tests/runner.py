"""One run of the suite: options in, a ledger out. The CLI and the pytest plugin both call `run`.

Order: load the contract, build the target (credentials, reachability), find the items other items must
reference, then the domain tests (deterministic, on the fixtures' state) and the Schemathesis phases.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from contract_tests import conformance
from contract_tests.domain import PER_SURFACE, surfaces
from contract_tests.domain.data import Context
from contract_tests.domain.http import Session, Unreachable
from contract_tests.findings import Ledger
from contract_tests.options import Options, UsageError
from contract_tests.spec import Spec
from contract_tests.target import Target, TargetError, build_target

Progress = Callable[[str], None]


def existing_references(spec: Spec, target: Target, timeout: float) -> dict[str, Any]:
    """For each field naming another collection's item, an identifier in use (so it surely exists)."""
    found: dict[str, Any] = {}
    surface = target.surface("backend")
    if surface is None:
        return found
    session = Session(surface, Ledger(), timeout)
    try:
        for child in spec.collections:
            for name, parent in spec.references(child.create).items():
                for source, field in ((child.list_op, name), (parent.list_op, parent.identifier)):
                    if name in found:
                        break
                    results = (session.call(source).json() or {}).get("results") or []
                    if results:
                        found[name] = results[0][field]
    except Unreachable as exc:
        raise TargetError(str(exc)) from exc
    finally:
        session.close()
    return found


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
    existing = existing_references(spec, target, options.request_timeout)
    ledger = Ledger()
    progress(f"seed {options.seed_value}; surfaces: {', '.join(s.name + ' ' + s.base_url for s in target.surfaces)}")
    if options.domain:
        ctx = Context(spec, options.run_tag, existing, options.enabled_strict, frozenset(options.include))
        run_domain(ctx, target, options, ledger, progress)
    if options.conformance:
        for surface in target.surfaces:
            conformance.run(spec, options, surface, existing, ledger, progress)
    return ledger
