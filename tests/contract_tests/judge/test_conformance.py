"""The Schemathesis settings of a run: Hypothesis' target phase is off (see UntargetedProject)."""

from __future__ import annotations

import hypothesis

from contract_tests.client.surface import Surface
from contract_tests.identities import Identities
from contract_tests.judge.engine import Plan, load_schema
from contract_tests.judge.known import Known
from contract_tests.options import Options
from contract_tests.spec import Spec
from tests.support.suite import a_run


def test_a_run_leaves_out_only_the_target_phase() -> None:
    base_url = "http://127.0.0.1:9/shop/api/v1"
    surface = Surface("backend", base_url, operations=("delete_product",), headers={}, accepted={})
    options = Options(base_url=base_url)
    schema = load_schema(
        a_run(Spec.load(), options, surface), surface, Plan(frozenset({"delete_product"})), Known(Identities())
    )
    for phase in ("examples", "coverage", "fuzzing", "stateful"):
        phases = set(schema.config.get_hypothesis_settings(phase=phase).phases)
        # no database (so no reuse), no explain (Schemathesis), no target (this suite)
        assert phases == {hypothesis.Phase.explicit, hypothesis.Phase.generate, hypothesis.Phase.shrink}
