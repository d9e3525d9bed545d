"""Child processes the tests start: how they are stopped."""

from __future__ import annotations

import subprocess

STOP_SECONDS = 10


def stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM, then SIGKILL if the child is still there `STOP_SECONDS` later."""
    process.terminate()
    try:
        process.wait(timeout=STOP_SECONDS)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
