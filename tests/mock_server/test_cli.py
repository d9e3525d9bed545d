"""`python -m mock_server`: options, the start banner, a real process that Ctrl-C stops cleanly."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from mock_server.arguments import parse_settings
from mock_server.cli import banner, main
from tests.shop_contract.test_urls import UNUSABLE
from tests.support.ports import free_port


def test_options_build_the_settings(tmp_path: Path) -> None:
    settings = parse_settings(
        ["--host", "0.0.0.0", "--port", "9000", "--api-key", "a", "--api-key", "b", "--cors-origin", "http://x"]
    )
    assert (settings.host, settings.port) == ("0.0.0.0", 9000)
    assert settings.api_keys == frozenset({"a", "b"})
    assert settings.cors_origins == ("http://x",)
    assert parse_settings(["--empty"]).fixtures is None
    assert parse_settings(["--fixtures", str(tmp_path)]).fixtures == tmp_path


def test_the_banner_names_every_url_and_the_dev_credentials() -> None:
    text = banner(parse_settings([]), 8123, "/shop/api/v1", "/customers/v1")
    for part in (
        "http://127.0.0.1:8123/",
        "http://127.0.0.1:8123/shop/api/v1/",
        "http://127.0.0.1:8123/customers/v1/customers/",
        "http://127.0.0.1:8123/shop/api/v1/ui/",
        "http://127.0.0.1:8123/realms/shop/.well-known/openid-configuration",
        "dev-api-key",
        "shop-dev / shop-dev-secret",
        "shop-user / shop-password",
    ):
        assert part in text


def test_bad_fixtures_are_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "productlines.json").write_text("[]", encoding="utf-8")
    assert main(["--fixtures", str(tmp_path), "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"shop-mock: error: {tmp_path}")


def test_bad_arguments_exit_2() -> None:
    with pytest.raises(SystemExit) as exit_info:
        parse_settings(["--port", "99999"])
    assert exit_info.value.code == 2


@pytest.mark.parametrize("key", ["", " key", "key ", "k\tey", "key\n"])
def test_an_api_key_no_header_can_carry_is_refused(key: str, capsys: pytest.CaptureFixture[str]) -> None:
    """An empty key let in a request whose X-API-Key was empty; a server strips a header value's spaces, so
    a key with one at an end never matched."""
    with pytest.raises(SystemExit) as exit_info:
        parse_settings(["--api-key", "good", "--api-key", key])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1].startswith("shop-mock: error: --api-key must be printable")


@pytest.mark.parametrize(
    ("url", "says"), [*UNUSABLE, ("http://127.0.0.1:9000/x?a=1", "must not hold a query or a fragment")]
)
@pytest.mark.parametrize("flag", ["--issuer", "--proxy", "contract --url"])
def test_a_url_the_mock_cannot_use_is_one_line_and_exit_2(
    flag: str, url: str, says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The first three were a traceback at the start (a ValueError of urllib), or a port the mock would fail to
    reach at every request; a password in the URL is not echoed."""
    if flag == "contract --url":
        assert main(["contract", "--url", url, "--out", str(tmp_path / "c.json")]) == 2
        assert not (tmp_path / "c.json").exists()
    else:
        with pytest.raises(SystemExit) as exit_info:
            parse_settings([flag, url])
        assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines()[-1].startswith(f"shop-mock: error: {flag.split()[-1]} {says}"), err
    assert "s3cret" not in err and "Traceback" not in err


def test_the_environment_gives_no_empty_api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHOP_MOCK_API_KEY", "a, ,b,")
    assert parse_settings([]).api_keys == frozenset({"a", "b"})


@pytest.mark.parametrize(("name", "says"), [("missing/port", "is not a directory"), (".", "is a directory")])
def test_a_port_file_that_cannot_be_written_is_refused_before_the_port_is_bound(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, says: str
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        parse_settings(["--port-file", str(tmp_path / name)])
    assert exit_info.value.code == 2
    assert says in capsys.readouterr().err


def test_a_port_file_that_fails_once_serving_stops_the_mock_with_one_line() -> None:
    """/dev/full passes the checks before the port is bound, and its write fails: the mock stops, exit 2,
    one line naming the file, never a traceback (a watcher waits for the file that never comes)."""
    done = subprocess.run(
        [sys.executable, "-m", "mock_server", "--port", "0", "--empty", "--port-file", "/dev/full"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("shop-mock: error: --port-file /dev/full: cannot write it: ")


def test_a_real_process_serves_prints_the_banner_and_stops_on_ctrl_c() -> None:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "mock_server", "--port", str(port), "--empty", "--log-level", "warning"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                health = httpx.get(f"http://127.0.0.1:{port}/__mock__/health")
                break
            except httpx.TransportError:
                assert process.poll() is None and time.monotonic() < deadline, "the mock did not start"
                time.sleep(0.1)
        assert health.json()["counts"]["products"] == 0
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=15)
    finally:
        process.kill()
    assert process.returncode == 0
    assert f"http://127.0.0.1:{port}/shop/api/v1/ui/" in out
    assert "Traceback" not in err


def test_the_swagger_ui_is_served_without_any_cdn(api: httpx.Client) -> None:
    page = api.get("/shop/api/v1/ui/")
    assert page.status_code == 200
    assert "https://" not in page.text and "cdn" not in page.text.lower()
    spec = api.get("/shop/api/v1/openapi.json").json()
    assert spec["info"]["version"] == "4.7.0"
    assert json.dumps(spec)
