"""A process that has imported the suite once and forks each of the tests' runs of its CLI from itself.

The default test run starts the suite's command line about 180 times, and each fresh interpreter spent
about 0.55 s of CPU importing the suite (schemathesis, hypothesis, httpx) before it sent a request. A
forked child starts with those modules loaded and nothing else: its own session, working directory,
environment, standard streams, arguments and `-W ignore`, as `python -W ignore -m contract_tests ARGS`
has. It then runs the CLI's `main` and exits through the interpreter's normal shutdown (atexit, threads,
and coverage's data under `tox -e coverage`: coverage.py follows a fork).

Run as `python -m tests.support.launcher` by `tests/support/suite.py`. It reads one JSON request a line
on stdin. For each it answers `{"pid": N}` once the child is forked, then `{"status": S, "maxrss_kib":
K, "cpu": C}` once it has ended (from `wait4`: the peak and the CPU seconds are the child's own). The
launcher stays single-threaded, which is what makes forking it safe. It exits when stdin closes.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import warnings
from pathlib import Path
from typing import Any

import contract_tests.cli

MAIN = str(Path(contract_tests.cli.__file__).with_name("__main__.py"))
PRELOADED = (
    "contract_tests.run.runner",
    "contract_tests.judge.engine",
    "contract_tests.client.target",
    "contract_tests.outcome.report",
    "schemathesis.specs.openapi.schemas",
    "schemathesis.engine.run.unit",
)
"""What a run imports as it goes (`python -X importtime`): 0.5 s of the 0.55, the rest comes with them."""


def _answer(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def forked_request() -> dict[str, Any]:
    """Serve requests until stdin closes (then exit); in each forked child, return that child's request."""
    for line in sys.stdin:
        request: dict[str, Any] = json.loads(line)
        pid = os.fork()
        if pid == 0:
            return request
        _answer({"pid": pid})
        _, status, usage = os.wait4(pid, 0)
        cpu = usage.ru_utime + usage.ru_stime
        _answer({"status": os.waitstatus_to_exitcode(status), "maxrss_kib": usage.ru_maxrss, "cpu": cpu})
    raise SystemExit(0)


def _become(request: dict[str, Any]) -> None:
    """The child's own session, directory, environment and streams, as a fresh process of the CLI has."""
    os.setsid()
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    for fd, path, flags in (
        (0, os.devnull, os.O_RDONLY),
        (1, request["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
        (2, request["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
    ):
        opened = os.open(path, flags)
        os.dup2(opened, fd)
        os.close(opened)
    sys.stdin = sys.__stdin__ = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115
    sys.stdout = sys.__stdout__ = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
    sys.stderr = sys.__stderr__ = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False, buffering=1)  # noqa: SIM115
    sys.argv = [MAIN, *request["argv"]]
    warnings.simplefilter("ignore")


if __name__ == "__main__":
    for module in PRELOADED:
        importlib.import_module(module)
    child = forked_request()
    _become(child)
    raise SystemExit(contract_tests.cli.main(child["argv"]))
