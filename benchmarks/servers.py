"""Start a server as a child process, wait until it answers, measure it, stop it.

The servers run on 127.0.0.1. Most benchmarks run them one at a time, so that the load generator and
one server share the machine's cores; `throughput` runs them all at once and measures them in turns,
so that other work on the shared machine falls on each alike.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CACHE = Path(__file__).resolve().parent / ".cache"
HOST = "127.0.0.1"
API_KEY = "dev-api-key"


class ServerError(RuntimeError):
    """A server did not start, or did not answer in time."""


@dataclass
class Server:
    """A running child process listening on `origin`; `startup_s` is spawn until first answer."""

    name: str
    process: subprocess.Popen[bytes]
    origin: str
    startup_s: float

    def rss_mib(self) -> float:
        """Resident memory of the server process (VmRSS), in MiB."""
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        raise ServerError(f"{self.name}: no VmRSS for pid {self.process.pid}")


def free_port() -> int:
    return free_ports(1)[0]


def free_ports(count: int) -> list[int]:
    """`count` distinct free ports: each probe stays bound until all are chosen, so none repeats."""
    with contextlib.ExitStack() as stack:
        probes = [stack.enter_context(socket.socket()) for _ in range(count)]
        for probe in probes:
            probe.bind((HOST, 0))
        return [int(probe.getsockname()[1]) for probe in probes]


def python_module(module: str, *args: str) -> list[str]:
    """The command that runs `python -m module args` with this interpreter."""
    return [sys.executable, "-m", module, *args]


def mock_command(port: int, *extra: str) -> list[str]:
    return python_module("mock_server", "--port", str(port), "--log-level", "warning", *extra)


def answers(url: str, headers: Mapping[str, str]) -> bool:
    """True once anything HTTP answers at `url` (an error status counts: the server is up)."""
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=dict(headers)), timeout=2):
            return True
    except urllib.error.HTTPError:
        return True
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return False


@contextlib.contextmanager
def running(
    name: str,
    command: Sequence[str],
    *,
    port: int,
    ready_path: str,
    env: Mapping[str, str] | None = None,
    cwd: Path = ROOT,
    timeout_s: float = 120.0,
) -> Iterator[Server]:
    """Run `command` (which must listen on `port`) until the block ends.

    Its output goes to a temporary file (a pipe nobody reads would block a chatty server) and is
    shown only if it dies before answering.
    """
    origin = f"http://{HOST}:{port}"
    with tempfile.TemporaryFile() as log:
        started = time.perf_counter()
        process = subprocess.Popen(
            list(command),
            cwd=cwd,
            env={**os.environ, **(env or {})},
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # so that stopping it stops its children too (Prism forks node)
        )
        try:
            while not answers(origin + ready_path, {"X-API-Key": API_KEY}):
                if process.poll() is not None:
                    log.seek(0)
                    output = log.read().decode(errors="replace")[-2000:]
                    raise ServerError(f"{name} exited with {process.returncode} before answering:\n{output}")
                if time.perf_counter() - started > timeout_s:
                    raise ServerError(f"{name} did not answer {ready_path} within {timeout_s:.0f} s")
                time.sleep(0.02)
            yield Server(name, process, origin, time.perf_counter() - started)
        finally:
            stop(process)


def stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM the process group we started, then SIGKILL it if it lingers."""
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
