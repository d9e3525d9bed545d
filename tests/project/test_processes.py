"""The helpers the tests start outside the measured packages run without coverage's tracer
(tests/support/processes.py): under CI's `coverage run` it would double their CPU time."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.support.processes import COVERAGE_HOOKS, unmeasured


def test_an_unmeasured_child_gets_every_variable_but_coverage_hooks(monkeypatch: pytest.MonkeyPatch) -> None:
    for hook in COVERAGE_HOOKS:
        monkeypatch.setenv(hook, "[run]\nbranch = true\n")
    monkeypatch.setenv("SHOP_SOMETHING", "kept")
    names = [*COVERAGE_HOOKS, "SHOP_SOMETHING"]
    shown = f"import os; print([name for name in {names!r} if name in os.environ])"
    child = subprocess.run([sys.executable, "-c", shown], env=unmeasured(), capture_output=True, text=True, check=True)
    assert child.stdout.strip() == "['SHOP_SOMETHING']"
