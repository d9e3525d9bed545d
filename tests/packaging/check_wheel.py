"""Install the built wheel as a user would and use it from outside the checkout (`tox -e wheel`).

1. Build the wheel; check it carries the spec and the fixtures, byte for byte the repository's, and
   every module of the source tree (a package missing from pyproject's list would be left out).
2. A fresh venv with the `mock` extra: from an empty directory, `shop-mock --port 0 --port-file F`,
   then `shop-contract --profile fast` against its backend and gateway (the documented dev credentials): exit 0.
3. A fresh venv without the extra: `shop-contract --version` and `--help` work, pytest lists the plugin's options,
   and `shop-mock` says in one line what to install and exits 2.

Standard library only, and uv to install (tox -e wheel gives it): nothing else is installed beside it.
Each failure stops with one line.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
import venv
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = {"openapi": "shop_contract/openapi", "fixtures": "shop_contract/fixtures"}
CODE = ("shop_contract", "mock_server", "contract_tests")
MOCK_HINT = 'pip install "shop-contract-suite[mock]"'


def step(message: str) -> None:
    print(f"check_wheel: {message}", flush=True)


def fail(message: str) -> None:
    sys.exit(f"check_wheel: FAILED: {message}")


def run(*args: str | Path, cwd: Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True, check=False)
    if check and done.returncode != 0:
        fail(f"{' '.join(map(str, args))} exited {done.returncode}\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}")
    return done


def build_wheel(out: Path) -> Path:
    run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "--wheel-dir", out, ROOT, cwd=out)
    (wheel,) = out.glob("shop_contract_suite-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        for folder, package in DATA.items():
            for source in sorted((ROOT / folder).iterdir()):
                if source.suffix not in (".yaml", ".json"):
                    continue
                name = f"{package}/{source.name}"
                if name not in names:
                    fail(f"the wheel lacks {name}")
                if archive.read(name) != source.read_bytes():
                    fail(f"the wheel's {name} differs from {folder}/{source.name}")
        modules = {path.relative_to(ROOT).as_posix() for top in CODE for path in (ROOT / top).rglob("*.py")}
        left_out = sorted(modules - names)
        if left_out:
            fail(f"the wheel lacks {len(left_out)} module(s) of the source tree, first {left_out[0]}")
    step(f"built {wheel.name}: every module, and the spec and fixtures identical to the repository's")
    return wheel


def fresh_venv(path: Path, requirement: str, cwd: Path) -> Path:
    """A new venv with `requirement` installed from the index, by uv (tox.ini installs it beside this script).

    pip took about 35 s of CPU for the two venvs, with bytecode compiled for every package they hold, and
    uv takes a few (issue 37). Both install the wheel by its metadata and make its entry points."""
    uv = shutil.which("uv")
    if uv is None:
        fail("uv is not on PATH (tox -e wheel installs it)")
    venv.EnvBuilder(with_pip=False).create(path)
    bin_dir = path / ("Scripts" if os.name == "nt" else "bin")
    run(uv, "pip", "install", "--quiet", "--python", bin_dir / "python", requirement, cwd=cwd)
    step(f"installed {requirement} into {path.name}")
    return bin_dir


def check_with_mock(bin_dir: Path, work: Path) -> None:
    port_file = work / "port"
    mock = subprocess.Popen(
        [bin_dir / "shop-mock", "--port", "0", "--port-file", port_file],
        cwd=work, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while not port_file.exists() or not port_file.read_text().endswith("\n"):
            if mock.poll() is not None or time.monotonic() > deadline:
                fail(f"shop-mock did not start:\n{mock.communicate()[0][-4000:]}")
            time.sleep(0.1)
        origin = f"http://127.0.0.1:{int(port_file.read_text())}"
        step(f"shop-mock serves on {origin} (port from --port-file)")
        suite = run(
            bin_dir / "shop-contract", "--profile", "fast", "--seed", "1", "--quiet",
            "--base-url", f"{origin}/shop/api/v1", "--gateway-url", f"{origin}/customers/v1",
            "--api-key", "dev-api-key", "--token-url", f"{origin}/realms/shop/protocol/openid-connect/token",
            "--client-id", "shop-dev", "--client-secret", "shop-dev-secret",
            cwd=work, check=False,
        )  # fmt: skip
        if suite.returncode != 0:
            fail(f"shop-contract --profile fast exited {suite.returncode}\n{suite.stdout[-6000:]}\n{suite.stderr}")
        step("shop-contract --profile fast against the installed mock, backend and gateway: exit 0")
    finally:
        mock.terminate()
        mock.communicate(timeout=30)


def check_without_mock(bin_dir: Path, work: Path) -> None:
    version = run(bin_dir / "shop-contract", "--version", cwd=work).stdout.strip()
    if not version.startswith("shop-contract ") or "unknown" in version:
        fail(f"shop-contract --version printed {version!r}")
    if "--base-url" not in run(bin_dir / "shop-contract", "--help", cwd=work).stdout:
        fail("shop-contract --help does not list --base-url")
    step(f"{version} and its --help work without the mock extra")
    if "--shop-base-url" not in run(bin_dir / "python", "-m", "pytest", "--help", cwd=work).stdout:
        fail("pytest --help does not list --shop-base-url: the plugin did not load")
    step("the pytest plugin loads (pytest --help lists --shop-base-url)")
    for command in ([bin_dir / "shop-mock"], [bin_dir / "python", "-m", "mock_server"]):
        done = run(*command, cwd=work, check=False)
        lines = done.stderr.splitlines()
        if done.returncode != 2 or len(lines) != 1 or MOCK_HINT not in lines[0]:
            fail(f"{command[-1]} without the extra: exit {done.returncode}, stderr {done.stderr!r}")
    step(f"shop-mock without the extra: one line naming {MOCK_HINT}, exit 2")


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="shop-wheel-") as temp:
        work = Path(temp)  # outside the checkout: nothing can be imported from the source tree
        wheel = build_wheel(work)
        # The two venvs are made side by side: pip waits on its cache and the disk as much as on the CPU.
        with ThreadPoolExecutor(2) as making:
            with_mock = making.submit(fresh_venv, work / "with-mock", f"{wheel}[mock]", work)
            suite_only = making.submit(fresh_venv, work / "suite-only", str(wheel), work)
            check_with_mock(with_mock.result(), work)
            check_without_mock(suite_only.result(), work)
    step("OK")


if __name__ == "__main__":
    main()
