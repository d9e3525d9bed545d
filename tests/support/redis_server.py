"""A real redis-server for the tests: Debian's binary on a free loopback port, no persistence.

Where the binary (or the redis client package) is missing, the tests that need it are skipped, with
the reason; with SHOP_REQUIRE_REDIS=1 (as in CI) they fail instead.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import subprocess
import time
from collections.abc import Iterator

import pytest

from tests.support.ports import free_port

REQUIRE = "SHOP_REQUIRE_REDIS"


def unavailable() -> str | None:
    """Why the Redis tests cannot run here, or None."""
    if shutil.which("redis-server") is None:
        return "redis-server is not installed (apt-get install redis-server)"
    if importlib.util.find_spec("redis") is None:
        return "the redis package is not installed (pip install -e '.[test]')"
    return None


@contextlib.contextmanager
def redis_server() -> Iterator[str]:
    """Yield the URL of database 0 of a fresh redis-server, stopped when the block ends."""
    reason = unavailable()
    if reason is not None:
        if os.environ.get(REQUIRE) == "1":
            pytest.fail(f"{REQUIRE}=1 but {reason}")
        pytest.skip(f"{reason}; set {REQUIRE}=1 to make this a failure")
    import redis

    port = free_port()
    command = ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"redis://127.0.0.1:{port}/0"
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                redis.Redis.from_url(url).ping()
                break
            except redis.ConnectionError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("redis-server did not start") from None
                time.sleep(0.05)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)
