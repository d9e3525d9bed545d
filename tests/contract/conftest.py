"""The suite's runs in these tests never write to the GitHub job summary of the CI running them."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from contract_tests.outcome.step_summary import VARIABLE
from tests.contract.elsewhere import Collector


@pytest.fixture(autouse=True)
def _no_job_summary(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each run (in process, or a subprocess inheriting the environment) would append its Markdown
    summary to the CI job's page; a test that wants one sets the variable itself."""
    monkeypatch.delenv(VARIABLE, raising=False)


@pytest.fixture
def collector() -> Iterator[Collector]:
    """A server on another loopback port standing for a host the user never named: it must receive nothing."""
    listening = Collector()
    yield listening
    listening.close()
