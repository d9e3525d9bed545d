"""Where the test run's time goes: wall and CPU time per test, per file and per directory.

Loaded with `-p tests.support.profiling` (`tox -e profile`). Each test's time is the sum of its setup,
call and teardown phases. CPU time is the process's own (every thread of the pytest worker) plus the
children it reaped during the phase (servers a test started and stopped) and the suite's runs forked
for it (tests/support/launcher.py); a server a module-scoped
fixture keeps counts to the test whose teardown stops it. Under pytest-xdist each worker measures its
tests and the figures travel to the controller in the reports, which adds them up and prints them.
"""

from __future__ import annotations

import json
import resource
import time
from collections import defaultdict
from collections.abc import Generator
from dataclasses import dataclass
from pathlib import PurePosixPath

import pytest

from tests.support import suite

SLOWEST = 30
"""Tests listed by wall time in the summary."""
CPU_KEY = "profile_cpu_seconds"
"""The name under which a phase's CPU time travels in the report's user properties."""


def cpu_seconds() -> float:
    """CPU time of this process, of the children it has reaped and of the suite's runs forked for it."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime + suite.forked_cpu_seconds()


@dataclass
class Cost:
    """Wall and CPU seconds of one test, or of a group of tests."""

    wall: float = 0.0
    cpu: float = 0.0
    tests: int = 0

    def add(self, other: Cost) -> None:
        self.wall += other.wall
        self.cpu += other.cpu
        self.tests += other.tests


class Profile:
    """The run's figures, gathered from the reports of every phase of every test."""

    def __init__(self) -> None:
        self.tests: dict[str, Cost] = defaultdict(Cost)

    def record(self, report: pytest.TestReport) -> None:
        cost = self.tests[report.nodeid]
        cost.wall += report.duration
        cost.cpu += sum(float(value) for key, value in report.user_properties if key == CPU_KEY)
        if report.when == "call":
            cost.tests = 1

    def by(self, group: str) -> dict[str, Cost]:
        """Totals per `file` or per `directory` (the test file's folder)."""
        totals: dict[str, Cost] = defaultdict(Cost)
        for nodeid, cost in self.tests.items():
            path = PurePosixPath(nodeid.split("::", 1)[0])
            totals[str(path if group == "file" else path.parent)].add(cost)
        return totals

    def as_json(self) -> dict[str, object]:
        def rows(costs: dict[str, Cost]) -> list[dict[str, object]]:
            ordered = sorted(costs.items(), key=lambda item: -item[1].wall)
            return [
                {"name": name, "wall": round(c.wall, 3), "cpu": round(c.cpu, 3), "tests": c.tests}
                for name, c in ordered
            ]

        return {"tests": rows(self.tests), "files": rows(self.by("file")), "directories": rows(self.by("directory"))}


class _Phases:
    """Measures each phase in the process that runs the test (the controller or an xdist worker)."""

    def __init__(self) -> None:
        self.started: dict[tuple[str, str], float] = {}

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None]:
        outcome = yield
        report: pytest.TestReport = outcome.get_result()
        started = self.started.pop((item.nodeid, call.when), None)
        if started is not None:
            report.user_properties = [*report.user_properties, (CPU_KEY, cpu_seconds() - started)]

    def _start(self, item: pytest.Item, when: str) -> None:
        self.started[(item.nodeid, when)] = cpu_seconds()

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        self._start(item, "setup")

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_call(self, item: pytest.Item) -> None:
        self._start(item, "call")

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_teardown(self, item: pytest.Item) -> None:
        self._start(item, "teardown")


class _Summary:
    """Adds up the reports where they arrive, and prints and writes the profile at the end."""

    def __init__(self, json_path: str | None) -> None:
        self.profile = Profile()
        self.json_path = json_path
        self.started = time.monotonic()

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.profile.record(report)

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        write = terminalreporter.write_line
        tests = self.profile.tests
        wall = sum(c.wall for c in tests.values())
        cpu = sum(c.cpu for c in tests.values())
        terminalreporter.section("profile")
        session = time.monotonic() - self.started
        write(f"{len(tests)} tests: {wall:.1f} s of test wall time, {cpu:.1f} s CPU; the session {session:.1f} s")
        write(f"slowest {SLOWEST} tests (wall s, CPU s):")
        for name, cost in sorted(tests.items(), key=lambda item: -item[1].wall)[:SLOWEST]:
            write(f"  {cost.wall:8.1f} {cost.cpu:8.1f}  {name}")
        for group in ("directory", "file"):
            write(f"per {group} (wall s, CPU s, tests):")
            for name, cost in sorted(self.profile.by(group).items(), key=lambda item: -item[1].wall):
                write(f"  {cost.wall:8.1f} {cost.cpu:8.1f} {cost.tests:5d}  {name}")
        if self.json_path:
            with open(self.json_path, "w", encoding="utf-8") as file:
                json.dump(self.profile.as_json(), file, indent=1)
            write(f"profile written to {self.json_path}")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--profile-json", metavar="PATH", help="also write the profile as JSON to PATH")


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(_Phases(), "shop-profile-phases")
    if not hasattr(config, "workerinput"):  # the controller (or a run without xdist) adds up and prints
        config.pluginmanager.register(_Summary(config.getoption("--profile-json")), "shop-profile-summary")
