"""How a run's work is cut to run side by side (judge/engine.py `plans`, `sliced`; run/scheduling.py
`unlinked`): every case, operation and collection lands in exactly one piece; and how the engine runs of
every surface are put in order (runner.run_conformance)."""

from __future__ import annotations

import itertools
import subprocess
import sys
import threading
from types import SimpleNamespace
from typing import Any, cast

import pytest

from contract_tests.client.surface import Surface
from contract_tests.client.under_test import Target
from contract_tests.identities import Identities
from contract_tests.judge.domain.data import Context
from contract_tests.judge.engine import COVERAGE_SHARES, Plan, plans, sliced
from contract_tests.judge.known import Known
from contract_tests.judge.run_context import RunContext
from contract_tests.options import Options
from contract_tests.outcome.findings import Ledger
from contract_tests.run import runner
from contract_tests.run.scheduling import unlinked
from contract_tests.sharding import collection_name
from contract_tests.spec import Spec

SPEC = Spec.load()


def options(**given: Any) -> Options:
    return Options(base_url="http://127.0.0.1:1/shop/api/v1", api_key="key", **given)


def backend() -> Surface:
    return Surface("backend", "http://127.0.0.1:1/shop/api/v1", tuple(SPEC.operations), {}, {})


def gateway() -> Surface:
    return Surface("gateway", "http://127.0.0.1:1/customers/v1", tuple(op.id for op in SPEC.gateway_operations), {}, {})


def test_each_stateless_phase_is_a_run_and_the_coverage_phase_is_shared_whatever_the_workers() -> None:
    found = plans(SPEC, options(workers=1), backend())
    assert found == plans(SPEC, options(workers=16), backend())  # one seed, the same cases
    stateless = [plan for plan in found if plan.stateless]
    assert [(next(iter(p.stateless)), p.share) for p in stateless] == [
        ("examples", (0, 1)),
        *[("coverage", (k, COVERAGE_SHARES)) for k in range(COVERAGE_SHARES)],
        ("fuzzing", (0, 1)),
    ]
    assert all(plan.operations == frozenset(SPEC.operations) and not plan.stateful for plan in stateless)
    stateful = [plan for plan in found if not plan.stateless]
    assert stateful and all(plan.stateful for plan in stateful)
    parts = [plan.part for plan in found]
    assert parts[:4] == [
        "conformance examples",
        *[f"conformance coverage share {k + 1}/{COVERAGE_SHARES}" for k in range(COVERAGE_SHARES)],
        "conformance fuzzing",
    ]
    assert len(set(parts)) == len(parts), "each plan is a part of its own in the digests"


def test_without_the_coverage_phase_no_run_is_planned_for_it() -> None:
    found = plans(SPEC, options(profile="fast"), backend())
    assert not any("coverage" in plan.stateless for plan in found)


def shares(n: int) -> list[Any]:
    """The filter `sliced` registers for each k of n."""
    filters = []
    for k in range(n):
        hooks = SimpleNamespace(registered=[])
        schema = SimpleNamespace(
            hooks=SimpleNamespace(hook=lambda name, h=hooks: lambda f: h.registered.append((name, f)))
        )
        sliced(schema, k, n)
        ((name, hook),) = hooks.registered
        assert name == "filter_case"
        filters.append(hook)
    return filters


def test_every_case_is_sent_by_exactly_one_share() -> None:
    filters = shares(COVERAGE_SHARES)
    bodies: list[Any] = [None, {}, {"msrp": "1.00"}, {"msrp": "1.0"}, {"name": "é/.."}, [1, 2], "text", b"\x00\xff"]
    cases = [
        SimpleNamespace(
            method=method, path_parameters=path, query=query, body=body, media_type="application/json", meta=None
        )
        for method, path, query, body in itertools.product(
            ["GET", "PATCH"],
            [None, {"productcode": "S10_1678"}, {"productcode": "S10.1678"}],
            [None, {"page": 0}],
            bodies,
        )
    ]
    counts = [sum(bool(keep(None, case)) for keep in filters) for case in cases]
    assert counts == [1] * len(cases)
    used = {next(k for k, keep in enumerate(filters) if keep(None, case)) for case in cases}
    assert used == set(range(COVERAGE_SHARES)), "the cases spread over every share"


def test_a_case_without_a_body_lands_in_the_same_share_in_every_process() -> None:
    """Schemathesis' absent body (`NOT_SET`) shows its address in its repr: the share followed the process."""
    program = """
import sys
from types import SimpleNamespace
from schemathesis.core import NOT_SET
from contract_tests.judge.engine import sliced
found = []
schema = SimpleNamespace(hooks=SimpleNamespace(hook=lambda name: found.append))
sliced(schema, 0, 2)
cases = [SimpleNamespace(method="GET", path_parameters={"n": n}, query=None, body=NOT_SET, media_type=None, meta=None)
         for n in range(32)]
print([found[0](None, case) for case in cases])
"""
    runs = {
        subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True).stdout for _ in "ab"
    }
    assert len(runs) == 1, runs


def test_a_case_lands_in_the_same_share_whatever_its_credentials() -> None:
    (keep, *_) = shares(2)
    case = SimpleNamespace(method="GET", path_parameters=None, query=None, body=None, media_type=None, meta=None)
    decided = keep(None, case)
    case.headers = {"Authorization": "Bearer another"}
    assert keep(None, case) == decided


def test_unlinked_groups_hold_every_operation_and_collection_once_and_never_a_reference_apart() -> None:
    groups = unlinked(Context(SPEC, Known(Identities())), SPEC)
    assert len(groups) == 2  # the catalog (a product names its product line) and the customers
    operations = [op for group in groups for op in sorted(group.shard_operations or ())]
    collections = [name for group in groups for name in sorted(group.shard_collections or ())]
    assert sorted(operations) == sorted(SPEC.operations)
    assert sorted(collections) == sorted(collection_name(c) for c in SPEC.collections)
    for op in SPEC.operations.values():
        (mine,) = [group for group in groups if op.id in (group.shard_operations or ())]
        for other in SPEC.references(op).values():
            assert collection_name(other) in (mine.shard_collections or ())


def test_unlinked_keeps_a_shards_share() -> None:
    ctx = Context(SPEC, Known(Identities()), shard_operations=frozenset({"list_customers", "list_products"}),
                  shard_collections=frozenset({"create_customer"}))  # fmt: skip
    groups = unlinked(ctx, SPEC)
    assert [sorted(g.shard_operations or ()) for g in groups] == [["list_products"], ["list_customers"]]
    assert [sorted(g.shard_collections or ()) for g in groups] == [[], ["create_customer"]]


@pytest.mark.parametrize("workers", [1, 64])
def test_every_surfaces_stateful_runs_start_first_and_together_and_their_findings_add_up_surface_by_surface(
    monkeypatch: pytest.MonkeyPatch, workers: int
) -> None:
    """Behind a network a stateful run is a chain of requests one after another, a run's longest part.
    When the surfaces took turns, the gateway's chains started once every run of the backend's had ended.
    With enough workers every surface's chains now run at once (the barrier breaks otherwise). That the
    cases are the same whatever the workers is held by tests/e2e/test_determinism.py, both surfaces."""
    surfaces = [backend(), gateway()]
    runs = [(surface.name, plan) for surface in surfaces for plan in plans(SPEC, options(), surface)]
    planned = [(name, plan.part) for name, plan in runs]
    stateful = [(name, plan.part) for name, plan in runs if plan.stateful]
    assert {name for name, _ in stateful} == {"backend", "gateway"}
    together = threading.Barrier(len(stateful))
    started: list[tuple[str, str]] = []

    def engine_run(run_ctx: RunContext, surface: Surface, plan: Plan, known: Known) -> Ledger:
        started.append((surface.name, plan.part))
        if plan.stateful and workers > 1:
            together.wait(timeout=10)
        own = run_ctx.ledger.part()
        own.skipped(surface.name, "-", plan.part, "ran")
        return own

    monkeypatch.setattr(runner, "_conformance_part", engine_run)
    run_ctx = RunContext(SPEC, options(workers=workers), cast(Target, None), Ledger(), lambda line: None)
    runner.run_conformance(run_ctx, surfaces, Known(Identities()))
    assert sorted(started[: len(stateful)]) == sorted(stateful)  # every surface's chains before any other run
    if workers == 1:
        assert started == stateful + [run for run in planned if run not in stateful]
    added = [(skip.surface, skip.check) for skip in run_ctx.ledger.not_exercised]
    assert added == planned  # the findings in plan order, surface by surface, whichever ended first
