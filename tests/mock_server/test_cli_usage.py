"""The mock's command line as a user meets it: the real port, a busy port, --version, --spec, logs.

Each test starts `python -m mock_server` as a process, the way `shop-mock` runs.
"""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
import yaml

from mock_server.cli import missing_mock_modules
from shop_contract.document import bundled_spec
from tests.support.hostile_files import laughs, sparse

KEY = {"X-API-Key": "dev-api-key"}


@contextmanager
def mock_process(*args: str, port_file: Path) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """`python -m mock_server --port 0 --port-file F ARGS`, and its origin once the port file is written."""
    process = subprocess.Popen(
        [sys.executable, "-m", "mock_server", "--port", "0", "--port-file", str(port_file), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not port_file.exists() or not port_file.read_text().endswith("\n"):
            assert process.poll() is None, process.communicate()[1]
            assert time.monotonic() < deadline, "the mock did not write its port file"
            time.sleep(0.05)
        yield process, f"http://127.0.0.1:{int(port_file.read_text())}"
    finally:
        process.terminate()
        process.communicate(timeout=15)


def stop(process: subprocess.Popen[str]) -> tuple[str, str]:
    process.terminate()
    return process.communicate(timeout=15)


def test_port_0_binds_a_free_port_that_the_banner_and_the_port_file_name(tmp_path: Path) -> None:
    with mock_process("--empty", port_file=tmp_path / "port") as (process, origin):
        assert httpx.get(f"{origin}/__mock__/health").status_code == 200
        out, err = stop(process)
    assert f"  API (backend)    {origin}/shop/api/v1/" in out
    assert ":0/" not in out
    assert "Traceback" not in err


def test_a_busy_port_is_one_line_and_exit_2() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "mock_server", "--port", str(port), "--empty"],
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
    assert done.returncode == 2
    assert done.stdout == ""  # no banner for a server that is not serving
    assert re.fullmatch(rf"shop-mock: error: cannot listen on 127\.0\.0\.1:{port}: .+\n", done.stderr), done.stderr


def test_version_names_the_distribution_version() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mock_server", "--version"], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0
    assert re.fullmatch(r"shop-mock \d+\.\d+\.\d+\S*\n", done.stdout), done.stdout


def test_the_mock_extra_is_present_in_the_test_environment() -> None:
    assert missing_mock_modules() == []


def test_access_log_is_one_line_per_request_and_refused_requests_log_no_error(tmp_path: Path) -> None:
    with mock_process("--access-log", port_file=tmp_path / "port") as (process, origin):
        with httpx.Client(base_url=origin, headers=KEY) as client:
            assert client.get("/shop/api/v1/productlines/?unknown=1").status_code == 200
            assert client.get("/shop/api/v1/productlines/?page=abc").status_code == 400
            # a form body is Connexion's to handle (the fast path takes JSON): the handler gets no unknown argument
            form = client.post("/shop/api/v1/productlines/?unknown=1", data={"productline": "Log Line"})
            assert form.status_code == 201, form.text
            refused = [
                client.get("/shop/api/v1/products/", headers={"X-API-Key": "wrong"}),
                client.post("/shop/api/v1/products/", content=b"{", headers={"Content-Type": "application/json"}),
                client.post("/shop/api/v1/products/", content=b"x", headers={"Content-Type": "text/plain"}),
                client.post("/shop/api/v1/productlines/?unknown=1", data={"textdescription": "no identifier"}),
            ]
            assert all(400 <= response.status_code < 500 for response in refused)
        out, err = stop(process)
    requests = [line for line in out.splitlines() if '"GET /shop' in line or '"POST /shop' in line]
    assert len(requests) == 7, out  # uvicorn's access log goes to stdout, other logs to stderr
    assert "ERROR" not in err and "Function argument" not in err, err


def test_debug_level_logs_every_request(tmp_path: Path) -> None:
    with mock_process("--empty", "--log-level", "debug", port_file=tmp_path / "port") as (process, origin):
        httpx.get(f"{origin}/__mock__/health")
        out, _ = stop(process)
    assert '"GET /__mock__/health HTTP/1.1" 200' in out


def test_another_revision_of_the_spec_is_served_with_the_same_behaviour(tmp_path: Path) -> None:
    spec = yaml.safe_load(bundled_spec().read_text(encoding="utf-8"))
    spec["info"]["version"] = "9.9.9-pr"
    for server in [*spec["servers"], *(s for item in spec["paths"].values() for s in item.get("servers", []))]:
        server["url"] = server["url"].replace("/shop/api/v1", "/shop/api/v2")
    (tmp_path / "openapi.yaml").write_text(yaml.safe_dump(spec), encoding="utf-8")
    args = ("--spec", str(tmp_path / "openapi.yaml"))
    with mock_process(*args, port_file=tmp_path / "port") as (process, origin):
        with httpx.Client(base_url=origin, headers=KEY) as client:
            assert client.get("/shop/api/v2/openapi.json").json()["info"]["version"] == "9.9.9-pr"
            assert client.get("/shop/api/v2/productlines/").json()["count"] == 8
            assert client.get("/shop/api/v2/productlines/Nope/").status_code == 404
            assert client.get("/shop/api/v1/productlines/").status_code == 404
        out, _ = stop(process)
    assert f"{origin}/shop/api/v2/" in out


@pytest.mark.parametrize(
    ("break_spec", "message"),
    [
        (lambda spec: spec["components"]["schemas"].pop("Product"), "lacks what the mock needs"),
        (lambda spec: [item.pop("servers", None) for item in spec["paths"].values()], "names no gateway"),
        (lambda spec: spec.pop("openapi"), "is not an OpenAPI 3 document"),
    ],
)
def test_a_spec_the_mock_cannot_serve_is_one_line_and_exit_2(tmp_path: Path, break_spec: object, message: str) -> None:
    spec = yaml.safe_load(bundled_spec().read_text(encoding="utf-8"))
    break_spec(spec)  # type: ignore[operator]
    (tmp_path / "openapi.yaml").write_text(yaml.safe_dump(spec), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "mock_server", "--spec", str(tmp_path / "openapi.yaml"), "--port", "0"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("shop-mock: error:"), done.stderr
    assert message in done.stderr


@pytest.mark.parametrize(
    ("write", "message"),
    [
        (lambda spec: spec.write_text(laughs(7), encoding="utf-8"), "its YAML aliases expand"),
        (lambda spec: sparse(spec, 2**30), "larger than"),
    ],
)
def test_a_spec_that_would_exhaust_the_mock_is_one_line_and_exit_2(
    tmp_path: Path, write: Callable[[Path], object], message: str
) -> None:
    """Before, the mock hung at start on 2 KB of aliases (5 million values once copied), and read a spec
    of gigabytes (or /dev/zero) until memory ran out."""
    spec = tmp_path / "openapi.yaml"
    write(spec)
    done = subprocess.run(
        [sys.executable, "-m", "mock_server", "--spec", str(spec), "--port", "0"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("shop-mock: error:"), done.stderr
    assert message in done.stderr


def test_fixtures_dir_seeds_the_mock(tmp_path: Path) -> None:
    data = tmp_path / "data"
    subprocess.run(
        [sys.executable, "-m", "mock_server", "generate", "--products", "20", "--out", str(data)],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    with mock_process("--fixtures", str(data), port_file=tmp_path / "port") as (process, origin):
        counts = httpx.get(f"{origin}/__mock__/health").json()["counts"]
        stop(process)
    assert counts["products"] == 20


def test_without_the_mock_extra_shop_mock_says_what_to_install() -> None:
    hide_uvicorn = "import sys; sys.modules['uvicorn'] = None; from mock_server.cli import main; sys.exit(main([]))"
    done = subprocess.run([sys.executable, "-c", hide_uvicorn], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2
    assert done.stderr == (
        'shop-mock: error: the mock needs its extra (uvicorn missing): pip install "shop-contract-suite[mock]"\n'
    )
