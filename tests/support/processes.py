"""Child processes the tests start: how they are stopped, and which are measured."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

STOP_SECONDS = 10
COVERAGE_HOOKS = ("COVERAGE_PROCESS_CONFIG", "COVERAGE_PROCESS_START")
"""What makes coverage.py start in a child process (`patch = ["subprocess"]` sets the first)."""
AT_CREATION = Path(__file__).resolve().parent / "at_creation"
"""A sitecustomize sending the child signals the moment it creates, or opens to read, a given file."""


def unmeasured() -> dict[str, str]:
    """This process's environment without coverage's hooks, for a helper that runs none of the measured
    packages (Django, a proxy): coverage's tracer there doubles its CPU time and measures nothing."""
    return {name: value for name, value in os.environ.items() if name not in COVERAGE_HOOKS}


def stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM, then SIGKILL if the child is still there `STOP_SECONDS` later."""
    process.terminate()
    try:
        process.wait(timeout=STOP_SECONDS)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def signalled_at(path: Path, signals: str = "SIGTERM SIGINT", on_read: bool = False) -> dict[str, str]:
    """The environment of a child sending itself `signals` the moment it creates `path`, or opens it to read
    (`on_read`): tests/support/at_creation/."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(AT_CREATION), os.environ.get("PYTHONPATH")]))}
    env |= {"SHOP_TEST_SIGNALS_AT": str(path), "SHOP_TEST_SIGNALS": signals}
    return env | ({"SHOP_TEST_SIGNALS_ON": "read"} if on_read else {})
