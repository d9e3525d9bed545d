"""How many pytest-xdist workers `-n auto` starts (tests/conftest.py): `SHOP_WORKERS_PER_CORE` per core,
one unless set, and a value that is not a small whole number is a usage error naming the variable."""

from __future__ import annotations

import os

import pytest

from tests.conftest import WORKERS_PER_CORE, pytest_xdist_auto_num_workers

CORES = os.cpu_count() or 1


@pytest.mark.parametrize(("value", "workers"), [(None, CORES), ("1", CORES), ("2", 2 * CORES), ("8", 8 * CORES)])
def test_workers_per_core(
    value: str | None, workers: int, monkeypatch: pytest.MonkeyPatch, pytestconfig: pytest.Config
) -> None:
    if value is None:
        monkeypatch.delenv(WORKERS_PER_CORE, raising=False)
    else:
        monkeypatch.setenv(WORKERS_PER_CORE, value)
    assert pytest_xdist_auto_num_workers(pytestconfig) == workers


@pytest.mark.parametrize("value", ["", "0", "9", "-1", "two", "1.5", " 2", "٢", "99999999999999999999"])
def test_a_bad_value_is_a_usage_error_naming_the_variable(
    value: str, monkeypatch: pytest.MonkeyPatch, pytestconfig: pytest.Config
) -> None:
    monkeypatch.setenv(WORKERS_PER_CORE, value)
    with pytest.raises(pytest.UsageError, match=WORKERS_PER_CORE):
        pytest_xdist_auto_num_workers(pytestconfig)
