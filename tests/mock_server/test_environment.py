"""`shop-mock`'s options from SHOP_MOCK_* variables (mock_server/environment.py): read as defaults,
checked like the options, a bad value one line and exit 2; the admin token from a variable or a file."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from mock_server.arguments import MAX_TOKEN_FILE_BYTES, parse_settings
from mock_server.cli import banner
from mock_server.environment import variable
from tests.support.hostile_files import sparse

MOUNTS = ("/shop/api/v1", "/customers/v1")


def shop_mock(*args: str, **variables: str) -> subprocess.CompletedProcess[str]:
    environ = {name: value for name, value in os.environ.items() if not name.startswith("SHOP_MOCK_")}
    command = [sys.executable, "-m", "mock_server", *args]
    return subprocess.run(command, env=environ | variables, capture_output=True, text=True, timeout=60, check=False)


def test_the_variable_of_an_option_is_its_long_name_in_capitals() -> None:
    assert variable("--admin-token-file") == "SHOP_MOCK_ADMIN_TOKEN_FILE"
    assert variable("--port") == "SHOP_MOCK_PORT"


def test_every_kind_of_option_is_read_from_its_variable(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name, value in {
        "SHOP_MOCK_HOST": "0.0.0.0",
        "SHOP_MOCK_PORT": "9000",
        "SHOP_MOCK_FIXTURES": str(tmp_path),
        "SHOP_MOCK_API_KEY": "key-a, key-b",
        "SHOP_MOCK_LOG_LEVEL": "debug",
        "SHOP_MOCK_SESSION_TTL": "2.5",
        "SHOP_MOCK_ACCESS_LOG": "yes",
        "SHOP_MOCK_STATE": "redis://redis:6379/0",
    }.items():
        monkeypatch.setenv(name, value)
    settings = parse_settings([])
    assert (settings.host, settings.port, settings.fixtures) == ("0.0.0.0", 9000, tmp_path)
    assert settings.api_keys == frozenset({"key-a", "key-b"})
    assert (settings.log_level, settings.session_ttl, settings.access_log) == ("debug", 2.5, True)
    assert settings.state == "redis://redis:6379/0"
    monkeypatch.setenv("SHOP_MOCK_EMPTY", "true")
    assert parse_settings([]).fixtures is None
    monkeypatch.setenv("SHOP_MOCK_EMPTY", "off")
    assert parse_settings([]).fixtures == tmp_path


def test_the_command_line_wins_over_the_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHOP_MOCK_PORT", "9000")
    monkeypatch.setenv("SHOP_MOCK_API_KEY", "from-the-environment")
    settings = parse_settings(["--port", "9001", "--api-key", "given"])
    assert settings.port == 9001 and settings.api_keys == frozenset({"given"})
    monkeypatch.setenv("SHOP_MOCK_PORT", "")  # empty: as if unset
    assert parse_settings([]).port == 8000


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("SHOP_MOCK_PORT", "eighty", "SHOP_MOCK_PORT='eighty': not a valid int"),
        ("SHOP_MOCK_PORT", "70000", "--port must be 0-65535, not 70000 (from SHOP_MOCK_PORT)"),
        ("SHOP_MOCK_LOG_LEVEL", "loud", "SHOP_MOCK_LOG_LEVEL='loud': choose from critical, error"),
        ("SHOP_MOCK_EMPTY", "maybe", "SHOP_MOCK_EMPTY='maybe': give one of 1, true"),
        ("SHOP_MOCK_WORKERS", "0", "--workers must be at least 1, not 0 (from SHOP_MOCK_WORKERS)"),
        ("SHOP_MOCK_PROXY_FALLBACK", "1", "--proxy-fallback needs --proxy URL (from SHOP_MOCK_PROXY_FALLBACK)"),
    ],
)
def test_a_bad_value_is_one_line_naming_the_variable_and_exit_2(name: str, value: str, message: str) -> None:
    done = shop_mock(**{name: value})
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and done.stderr.startswith(f"shop-mock: error: {message}"), done.stderr


def test_the_admin_token_comes_from_a_variable_or_a_file_and_is_never_printed(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    secret = tmp_path / "admin_token"
    secret.write_text("from-a-secret-file\n", encoding="utf-8")
    monkeypatch.setenv("SHOP_MOCK_HOST", "0.0.0.0")
    monkeypatch.setenv("SHOP_MOCK_ADMIN_TOKEN_FILE", str(secret))
    from_file = parse_settings([])
    assert from_file.admin_token == "from-a-secret-file"
    assert "from-a-secret-file" not in banner(from_file, 8000, *MOUNTS)
    assert "token required: the one given" in banner(from_file, 8000, *MOUNTS)
    monkeypatch.delenv("SHOP_MOCK_ADMIN_TOKEN_FILE")
    monkeypatch.setenv("SHOP_MOCK_ADMIN_TOKEN", "from-a-variable")
    from_variable = parse_settings([])
    assert from_variable.admin_token == "from-a-variable"
    assert "from-a-variable" not in banner(from_variable, 8000, *MOUNTS)
    monkeypatch.delenv("SHOP_MOCK_ADMIN_TOKEN")
    generated = parse_settings([])  # the bind rule stays: a token on any bind but loopback, printed
    assert generated.admin_token and f"Bearer {generated.admin_token}" in banner(generated, 8000, *MOUNTS)


def test_admin_options_from_the_environment_still_exclude_each_other(tmp_path: Path) -> None:
    done = shop_mock("--admin-token", "x", SHOP_MOCK_NO_ADMIN="1")
    assert done.returncode == 2
    excluded = "--admin-token and --no-admin exclude each other (from SHOP_MOCK_NO_ADMIN)"
    assert done.stderr == f"shop-mock: error: {excluded}\n"
    (tmp_path / "empty").write_text("\n", encoding="utf-8")
    large = sparse(tmp_path / "large", 2**30)  # a wrong path, /dev/zero: it was read whole, all the memory
    for path, reason in (
        (tmp_path / "missing", "No such file or directory"),
        (tmp_path / "empty", "is empty"),
        (large, f"cannot read {large}: larger than {MAX_TOKEN_FILE_BYTES} bytes"),
    ):
        done = shop_mock(SHOP_MOCK_ADMIN_TOKEN_FILE=str(path))
        assert done.returncode == 2 and reason in done.stderr and done.stderr.count("\n") == 1, done.stderr


def test_a_mock_configured_by_variables_alone_serves(tmp_path: Path) -> None:
    port_file = tmp_path / "port"
    environ = {name: value for name, value in os.environ.items() if not name.startswith("SHOP_MOCK_")}
    environ |= {
        "SHOP_MOCK_PORT": "0",
        "SHOP_MOCK_PORT_FILE": str(port_file),
        "SHOP_MOCK_EMPTY": "1",
        "SHOP_MOCK_API_KEY": "container-key",
        "SHOP_MOCK_ADMIN_TOKEN": "never-shown",
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "mock_server"], env=environ, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 60
        while not port_file.exists() or not port_file.read_text().endswith("\n"):
            assert process.poll() is None, process.communicate()[1]
            assert time.monotonic() < deadline, "the mock did not write its port file"
            time.sleep(0.05)
        origin = f"http://127.0.0.1:{int(port_file.read_text())}"
        lines = httpx.get(f"{origin}/shop/api/v1/productlines/", headers={"X-API-Key": "container-key"})
        assert lines.status_code == 200 and lines.json()["count"] == 0
        assert httpx.get(f"{origin}/__mock__/health").status_code == 401
    finally:
        process.terminate()
        out, _ = process.communicate(timeout=15)
    assert "never-shown" not in out and re.search(r"admin .*token required: the one given", out)
