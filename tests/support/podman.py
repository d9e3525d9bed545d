"""Podman for the container tests: the image under test, containers that are always removed, waits.

The image is built by `.ci/container` (or by hand, see its header); these tests never build it. Podman
reads its runtime and rlimits from CONTAINERS_CONF (.ci/containers.conf on this project's machines).
"""

from __future__ import annotations

import os
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import httpx
import pytest

IMAGE = os.environ.get("SHOP_CONTAINER_IMAGE", "localhost/shop-contract-suite:ci")
SERVICES_IMAGE = os.environ.get("SHOP_SERVICES_IMAGE", "localhost/debian-services:local")


def podman(*args: str, timeout: float = 120, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(["podman", *args], capture_output=True, text=True, timeout=timeout, check=False)
    if check and done.returncode != 0:
        pytest.fail(f"podman {' '.join(args)}: exit {done.returncode}\n{done.stdout}\n{done.stderr}")
    return done


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def require_image() -> None:
    if podman("image", "exists", IMAGE, check=False).returncode != 0:
        pytest.fail(f"no image {IMAGE}: build it with .ci/container (or set SHOP_CONTAINER_IMAGE)")


@contextmanager
def container(*args: str, name: str | None = None) -> Iterator[str]:
    """`podman run --detach ARGS`: its name, the container removed (with its volumes) afterwards."""
    name = name or unique("shop-test")
    podman("run", "--detach", "--name", name, *args)
    try:
        yield name
    finally:
        podman("rm", "--force", "--time", "0", name, check=False)


def wait_for(check: Callable[[], bool], what: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, f"{what}: not within {seconds:g} s"
        time.sleep(0.25)


def answers(url: str, **headers: str) -> bool:
    try:
        return httpx.get(url, headers=headers, timeout=5).status_code < 500
    except httpx.TransportError:
        return False
