"""Serve the DRF backend for real: a subprocess (Django settings are process-global) running uvicorn or gunicorn."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

from tests.support.drf import CONFIGURATIONS, CORRECT, SERVERS
from tests.support.processes import stop, unmeasured

PROJECT = Path(__file__).resolve().parents[3]
STARTUP_SECONDS = 30


@contextlib.contextmanager
def serve(
    variant: str = CORRECT, *, realm_url: str, extra_products: int = 0, server: str = SERVERS[0]
) -> Iterator[str]:
    """Yield the origin (http://127.0.0.1:PORT) of the backend `variant` served by `server` until the block ends.

    Tokens are verified against the realm at `realm_url` (its JWKS and issuer); `extra_products`
    adds that many products to one product line. Each call is a fresh database.
    """
    if variant not in CONFIGURATIONS:
        raise ValueError(f"unknown variant {variant!r}")
    if server not in SERVERS:
        raise ValueError(f"unknown server {server!r}: one of {', '.join(SERVERS)}")
    with tempfile.TemporaryDirectory(prefix="shop-drf-serve-") as directory:
        port_file, log_file = Path(directory) / "port", Path(directory) / "log"
        command = [sys.executable, "-m", "tests.support.drf", "--variant", variant, "--realm-url", realm_url]
        command += ["--port", "0", "--port-file", str(port_file), "--extra-products", str(extra_products)]
        command += ["--server", server]
        with log_file.open("wb") as log:
            process = subprocess.Popen(command, cwd=PROJECT, env=unmeasured(), stdout=log, stderr=subprocess.STDOUT)
        try:
            origin = wait_until_answering(process, port_file, log_file)
            yield origin
        finally:
            stop(process)


def wait_until_answering(process: subprocess.Popen[bytes], port_file: Path, log_file: Path) -> str:
    """The origin once the child has written its port and answers HTTP; its log if it dies or hangs."""
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the DRF backend exited with {process.returncode}:\n{log_file.read_text()[-3000:]}")
        port = port_file.read_text().strip() if port_file.exists() else ""
        if port.isdigit():
            origin = f"http://127.0.0.1:{port}"
            with contextlib.suppress(httpx.TransportError):
                httpx.get(f"{origin}/shop/api/v1/", timeout=2)
                return origin
        time.sleep(0.05)
    process.kill()
    raise RuntimeError(f"the DRF backend did not answer within {STARTUP_SECONDS} s:\n{log_file.read_text()[-3000:]}")
