"""Child processes the tests start: how they are stopped, and which are measured."""

from __future__ import annotations

import os
import subprocess

STOP_SECONDS = 10
COVERAGE_HOOKS = ("COVERAGE_PROCESS_CONFIG", "COVERAGE_PROCESS_START")
"""What makes coverage.py start in a child process (`patch = ["subprocess"]` sets the first)."""


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
