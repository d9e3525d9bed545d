"""The mock served by a real ASGI server in a child process: uvicorn (its own CLI) or hypercorn."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path

from tests.support.ports import free_port
from tests.support.zoo.process import serving

SERVERS = ("uvicorn", "hypercorn")


def command(server: str, port: int) -> list[str]:
    """How a user starts the mock under `server` on 127.0.0.1:`port`."""
    if server == "uvicorn":
        return [sys.executable, "-m", "mock_server", "--port", str(port), "--log-level", "warning"]
    if server == "hypercorn":
        application = f"tests.support.zoo.asgi:mock({port})"  # hypercorn calls a factory named with its arguments
        return [sys.executable, "-m", "hypercorn", "--bind", f"127.0.0.1:{port}", "--log-level", "warning", application]
    raise ValueError(f"unknown server {server!r}: one of {', '.join(SERVERS)}")


@contextlib.contextmanager
def mock_under(server: str, directory: Path) -> Iterator[str]:
    """Yield the origin (http://127.0.0.1:PORT) of the mock served by `server`, its log in `directory`."""
    port = free_port()
    origin = f"http://127.0.0.1:{port}"
    with serving(command(server, port), directory / f"{server}.log", f"{origin}/__mock__/health"):
        yield origin
