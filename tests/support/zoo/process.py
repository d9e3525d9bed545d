"""A server the tests start as a child process, stopped (and its log shown if it failed) at the end."""

from __future__ import annotations

import contextlib
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

from tests.support.live import TRUSTED
from tests.support.processes import stop
from tests.support.suite import ROOT

STARTUP_SECONDS = 30


@contextlib.contextmanager
def serving(
    command: list[str], log_file: Path, probe: str, env: dict[str, str] | None = None, **options: object
) -> Iterator[subprocess.Popen[bytes]]:
    """Run `command` (from the project root, in `env` or this environment) until the block ends, once
    `probe` (a URL) answers HTTP at all.

    `options` go to `httpx.get` for the probe (e.g. `verify=` for TLS). The child is sent SIGTERM at
    the end, SIGKILL if it is still there 10 s later (`tests.support.processes.stop`).
    """
    with log_file.open("wb") as log:
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_until_answering(process, log_file, probe, **options)
        yield process
    finally:
        stop(process)


def wait_until_answering(process: subprocess.Popen[bytes], log_file: Path, probe: str, **options: object) -> None:
    """Return once `probe` answers; raise with the child's log if it exits or stays silent too long."""
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{process.args!r} exited with {process.returncode}:\n{log_file.read_text()[-3000:]}")
        with contextlib.suppress(httpx.TransportError):
            httpx.get(probe, timeout=2, **{"verify": TRUSTED, **options})  # type: ignore[arg-type]
            return
        time.sleep(0.05)
    raise RuntimeError(f"{process.args!r} did not answer within {STARTUP_SECONDS} s:\n{log_file.read_text()[-3000:]}")
