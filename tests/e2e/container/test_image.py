"""The image as users run it (Dockerfile at the root), over real HTTP: the mock answers as a non-root
user, its health check turns healthy, the suite inside the image checks a mock in another container,
a mounted fixtures folder is served, the admin token comes from a secret file, `podman stop` is quick
(for the mock, and for the suite as PID 1).
Marked `container`: `.ci/container` builds the image and runs them (tox -e container).
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.podman import IMAGE, answers, container, podman, require_image, unique, wait_for
from tests.support.ports import free_port

pytestmark = pytest.mark.container

KEY = {"X-API-Key": "dev-api-key"}
LINES = "/shop/api/v1/productlines/"
FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"


@pytest.fixture(scope="module")
def network() -> Iterator[str]:
    require_image()
    name = unique("shop-test-net")
    podman("network", "create", name)
    try:
        yield name
    finally:
        podman("network", "rm", "--force", name, check=False)


@pytest.fixture(scope="module")
def mock(network: str) -> Iterator[tuple[str, str]]:
    """The image's default command in a container on `network`: its name and its published origin."""
    port = free_port()
    with container("--network", network, "--publish", f"127.0.0.1:{port}:8000", IMAGE) as name:
        origin = f"http://127.0.0.1:{port}"
        wait_for(lambda: answers(origin + LINES, **KEY), "the mock in the container answering")
        yield name, origin


def test_the_mock_answers_on_port_8000_as_a_non_root_user(mock: tuple[str, str]) -> None:
    name, origin = mock
    lines = httpx.get(origin + LINES, headers=KEY, timeout=10)
    assert lines.status_code == 200 and lines.json()["count"] > 0
    status = podman("exec", name, "cat", "/proc/1/status").stdout
    uid = next(line.split()[1:] for line in status.splitlines() if line.startswith("Uid:"))
    assert uid[0] != "0" and len(set(uid)) == 1, status  # real, effective, saved and fs uid alike
    assert podman("inspect", "--format", "{{.Config.User}}", IMAGE).stdout.strip().split(":")[0] not in {
        "",
        "0",
        "root",
    }


def test_the_health_check_turns_healthy_and_fails_without_a_mock(mock: tuple[str, str]) -> None:
    name, _ = mock
    assert podman("healthcheck", "run", name, check=False).returncode == 0
    assert podman("inspect", "--format", "{{.State.Health.Status}}", name).stdout.strip() == "healthy"
    with container("--entrypoint", "sleep", IMAGE, "60") as idle:  # the image's own check, no mock listening
        failed = podman("healthcheck", "run", idle, check=False)
        assert failed.returncode == 1 and failed.stdout.strip() == "unhealthy", failed.stdout + failed.stderr


def test_the_suite_in_the_image_checks_the_mock_in_another_container(mock: tuple[str, str], network: str) -> None:
    name, _ = mock
    origin = f"http://{name}:8000"
    done = podman(
        "run", "--rm", "--network", network, "--no-healthcheck",
        "--env", "SHOP_CONTRACT_API_KEY=dev-api-key", "--env", "SHOP_CONTRACT_CLIENT_SECRET=shop-dev-secret",
        IMAGE, "shop-contract",
        "--base-url", f"{origin}/shop/api/v1", "--gateway-url", f"{origin}/customers/v1",
        "--token-url", f"{origin}/realms/shop/protocol/openid-connect/token", "--client-id", "shop-dev",
        "--profile", "fast", "--max-examples", "5", "--seed", "7", "--quiet",
        timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Result: no violation." in done.stdout


def test_podman_stop_ends_the_suite_as_pid_1_with_its_verdict_stopped(mock: tuple[str, str], network: str) -> None:
    name, _ = mock
    base = f"http://{name}:8000/shop/api/v1"
    command = ["shop-contract", "--base-url", base, "--seed", "7", "--report-dir", "/tmp/r"]
    with container(
        "--network", network, "--no-healthcheck", "--env", "SHOP_CONTRACT_API_KEY=dev-api-key", IMAGE, *command
    ) as suite:  # fmt: skip
        wait_for(lambda: "seed 7" in written(suite), "the suite testing")
        started = time.monotonic()
        podman("stop", "--time", "10", suite)
        took = time.monotonic() - started
        code = podman("inspect", "--format", "{{.State.ExitCode}}", suite).stdout.strip()
        logs = written(suite)
    assert took < 5, f"podman stop took {took:.1f} s"  # the requests in flight end, then the reports are written
    assert code == "2", logs[-3000:]  # 137 would be podman's kill
    assert "Result: stopped: interrupted by SIGTERM" in logs
    assert "shop-contract: error: interrupted by SIGTERM" in logs


def written(name: str) -> str:
    """What the container wrote, on stdout and stderr."""
    logs = podman("logs", name)
    return logs.stdout + logs.stderr


def test_a_mounted_fixtures_folder_is_served(tmp_path: Path) -> None:
    require_image()
    folder = tmp_path / "fixtures"
    shutil.copytree(FIXTURES, folder, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    lines = json.loads((folder / "productlines.json").read_text(encoding="utf-8"))
    lines[0]["textdescription"] = "Served from a mounted folder."
    (folder / "productlines.json").write_text(json.dumps(lines), encoding="utf-8")
    folder.chmod(0o755)  # the container's user is not the files' owner
    for path in folder.iterdir():
        path.chmod(0o644)
    port = free_port()
    volume = f"{folder}:/fixtures:ro"
    with container(
        "--publish", f"127.0.0.1:{port}:8000", "--volume", volume, "--env", "SHOP_MOCK_FIXTURES=/fixtures", IMAGE
    ):
        origin = f"http://127.0.0.1:{port}"
        wait_for(lambda: answers(origin + LINES, **KEY), "the mock with mounted fixtures answering")
        first = httpx.get(f"{origin}{LINES}{lines[0]['productline']}/", headers=KEY, timeout=10)
        assert first.status_code == 200 and first.json()["textdescription"] == "Served from a mounted folder."


def test_the_admin_token_comes_from_a_secret_file_and_is_never_printed(tmp_path: Path) -> None:
    require_image()
    secret = tmp_path / "admin_token"
    secret.write_text("a-secret-from-a-file\n", encoding="utf-8")
    secret.chmod(0o644)
    port = free_port()
    token_file = (
        "--volume",
        f"{secret}:/run/secrets/admin_token:ro",
        "--env",
        "SHOP_MOCK_ADMIN_TOKEN_FILE=/run/secrets/admin_token",
    )
    with container("--publish", f"127.0.0.1:{port}:8000", *token_file, IMAGE) as name:
        origin = f"http://127.0.0.1:{port}"
        wait_for(lambda: answers(origin + LINES, **KEY), "the mock with a token file answering")
        assert httpx.get(f"{origin}/__mock__/health", timeout=10).status_code == 401  # through the mapped port
        bearer = {"Authorization": "Bearer a-secret-from-a-file"}
        assert httpx.get(f"{origin}/__mock__/health", headers=bearer, timeout=10).status_code == 200
        logs = podman("logs", name)
        assert "a-secret-from-a-file" not in logs.stdout + logs.stderr and "the one given" in logs.stdout


def test_podman_stop_ends_the_mock_within_3_s_without_a_kill() -> None:
    require_image()
    port = free_port()
    with container("--publish", f"127.0.0.1:{port}:8000", IMAGE) as name:
        wait_for(lambda: answers(f"http://127.0.0.1:{port}{LINES}", **KEY), "the mock answering")
        started = time.monotonic()
        podman("stop", "--time", "10", name)
        took = time.monotonic() - started
        code = podman("inspect", "--format", "{{.State.ExitCode}}", name).stdout.strip()
    assert took < 3, f"podman stop took {took:.1f} s"
    assert code != "137", "SIGTERM was not handled: podman killed the mock"


def test_the_image_holds_no_compiler_no_pip_cache_no_wheels_and_not_the_build_ca() -> None:
    require_image()
    probe = (
        "import glob, shutil; "
        "print([c for c in ('gcc', 'cc', 'make') if shutil.which(c)] + "
        "glob.glob('/root/.cache/pip') + glob.glob('/home/*/.cache/pip') + glob.glob('/wheels') + "
        "glob.glob('/run/secrets/ca') + glob.glob('/opt/venv/lib/python3*/site-packages/pip'))"
    )
    done = podman("run", "--rm", "--no-healthcheck", "--user", "0", IMAGE, "python", "-c", probe)
    assert done.stdout.strip() == "[]", done.stdout
