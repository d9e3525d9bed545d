"""The suite's runs in these tests never write to the GitHub job summary of the CI running them."""

from __future__ import annotations

import pytest

from contract_tests.outcome.step_summary import VARIABLE


@pytest.fixture(autouse=True)
def _no_job_summary(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each run (in process, or a subprocess inheriting the environment) would append its Markdown
    summary to the CI job's page; a test that wants one sets the variable itself."""
    monkeypatch.delenv(VARIABLE, raising=False)
