"""The run object: one value for a run, and a part of the run that reports elsewhere gets a copy."""

from __future__ import annotations

import dataclasses

import pytest

from contract_tests.client.surface import Surface
from contract_tests.options import Options
from contract_tests.outcome.findings import Ledger
from contract_tests.spec import Spec
from tests.support.suite import a_run

BASE = "http://127.0.0.1:9/shop/api/v1"


def test_a_part_of_the_run_gets_a_copy_and_the_run_is_unchanged() -> None:
    surface = Surface("backend", BASE, operations=("list_products",), headers={}, accepted={})
    run = a_run(Spec.load(), Options(base_url=BASE), surface)
    own = Ledger()
    part = run.reporting_to(own)
    resized = run.resized(dataclasses.replace(run.options, workers=4))
    assert part.ledger is own and run.ledger is not own
    assert resized.options.workers == 4 and run.options.workers != 4
    assert (part.spec, part.target, resized.ledger) == (run.spec, run.target, run.ledger)
    with pytest.raises(dataclasses.FrozenInstanceError):
        run.ledger = own  # type: ignore[misc]
