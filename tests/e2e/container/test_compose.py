"""examples/compose/shared-mock.yml started from the file with podman-compose: Redis, two replicas of
the image, nginx round-robin in front; a record written through one replica is read through the other.
Marked `container` (tox -e container). Redis and nginx come from a local Debian image (no registry
is reachable from CI), given through the file's REDIS_IMAGE and NGINX_IMAGE variables.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.podman import IMAGE, SERVICES_IMAGE, answers, require_image, unique, wait_for
from tests.support.ports import free_port

pytestmark = pytest.mark.container

COMPOSE = Path(__file__).resolve().parents[3] / "examples" / "compose"
KEY = {"X-API-Key": "dev-api-key"}
LINES = "/shop/api/v1/productlines/"


def compose(folder: Path, project: str, *args: str, environ: dict[str, str]) -> subprocess.CompletedProcess[str]:
    beside_python = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    found = shutil.which("podman-compose", path=beside_python) or "podman-compose"
    command = [found, "--project-name", project, "-f", "shared-mock.yml"]
    return subprocess.run(
        [*command, *args], cwd=folder, env=environ, capture_output=True, text=True, timeout=180, check=False
    )


@pytest.fixture
def shared_mock(tmp_path: Path) -> Iterator[str]:
    """The compose file's services, up; the origin nginx publishes on loopback."""
    require_image()
    for name in ("shared-mock.yml", "nginx.conf"):
        shutil.copy(COMPOSE / name, tmp_path / name)
    (tmp_path / "admin_token").write_text("compose-admin-token\n", encoding="utf-8")
    (tmp_path / "admin_token").chmod(0o644)
    port = free_port()
    environ = os.environ | {
        "SHOP_MOCK_IMAGE": IMAGE,
        "REDIS_IMAGE": SERVICES_IMAGE,
        "NGINX_IMAGE": SERVICES_IMAGE,
        "SHOP_MOCK_PUBLISH": f"127.0.0.1:{port}",
    }
    project = unique("shop-shared")
    up = compose(tmp_path, project, "up", "--detach", environ=environ)
    try:
        assert up.returncode == 0, up.stdout + up.stderr
        origin = f"http://127.0.0.1:{port}"
        wait_for(lambda: answers(origin + LINES, **KEY), "nginx and a replica answering", seconds=90)
        yield origin
    finally:
        compose(tmp_path, project, "down", "--timeout", "2", environ=environ)


def served_by(answer: httpx.Response) -> str:
    """The replica that answered. nginx's `$upstream_addr` lists every replica it tried: "a, b" when a
    failed (one still starting) and b answered."""
    return answer.headers["x-upstream"].split(",")[-1].strip()


def test_a_record_written_through_one_replica_is_read_through_the_other(shared_mock: str) -> None:
    with httpx.Client(base_url=shared_mock, headers=KEY, timeout=10) as client:

        def both_replicas_answer() -> bool:
            """Each of two replicas answered a read of its own, none after another failed: a replica that
            failed is skipped for the file's `fail_timeout`. Counting "a, b" as a third replica once let
            the test go on while a was skipped, and the write and four reads after it all went to b."""
            reads = [client.get(LINES) for _ in range(4)]
            tried = [r.headers["x-upstream"] for r in reads]
            return all(r.status_code == 200 for r in reads) and "," not in "".join(tried) and len(set(tried)) == 2

        wait_for(both_replicas_answer, "both replicas answering through nginx", seconds=60)
        line = {"productline": "Compose Boats", "textdescription": "written through one replica"}
        created = client.post(LINES, json=line)
        assert created.status_code == 201, created.text
        writer = served_by(created)
        for _ in range(4):  # round-robin: the next request or the one after goes to the other replica
            read = client.get(f"{LINES}Compose Boats/")
            if served_by(read) != writer:
                break
        assert served_by(read) != writer, "nginx sent every request to one replica"
        assert read.status_code == 200 and read.json() == created.json()
