"""The benchmark data generator writes a consistent data set and rejects bad input."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from contract_tests.spec import Spec
from mock_server.generate import FIRST_ORDER_NUMBER, MAX_PRODUCTS, main, product_code
from tests.support.fixture_rules import COLLECTIONS, Dataset, check_consistency, load_dataset
from tests.support.suite import ROOT

PRODUCTS = 500


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Dataset:
    out = tmp_path_factory.mktemp("generated")
    assert main(["--products", str(PRODUCTS), "--out", str(out), "--seed", "7"]) == 0
    return load_dataset(out)


def test_output_is_consistent(generated: Dataset) -> None:
    check_consistency(generated)


def test_sizes(generated: Dataset) -> None:
    assert len(generated["products"]) == PRODUCTS
    assert len(generated["customers"]) == 30
    assert len(generated["orderdetails"]) == PRODUCTS
    assert 7 <= len(generated["productlines"]) <= 10
    assert generated["orders"] and generated["payments"]


def test_a_generation_leaves_the_six_files_and_nothing_else(tmp_path: Path) -> None:
    assert main(["--products", "20", "--out", str(tmp_path)]) == 0
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(f"{stem}.json" for stem in COLLECTIONS)


def test_same_seed_same_output(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    for out in (first, second):
        assert main(["--products", "50", "--out", str(out), "--seed", "3"]) == 0
    assert load_dataset(first) == load_dataset(second)


@pytest.mark.parametrize("count", [1, 7, 9, 31])
def test_tiny_sizes_stay_consistent(tmp_path: Path, count: int) -> None:
    assert main(["--products", str(count), "--out", str(tmp_path)]) == 0
    data = load_dataset(tmp_path)
    check_consistency(data)
    assert len(data["products"]) == count


@pytest.mark.parametrize(
    "argv",
    [
        ["--products", "0", "--out", "OUT"],
        ["--products", "-5", "--out", "OUT"],
        ["--products", "many", "--out", "OUT"],
        ["--products", str(MAX_PRODUCTS + 1), "--out", "OUT"],
        ["--products", str(10**20), "--out", "OUT"],
        ["--products", "0\n", "--out", "OUT"],
        ["--products", "1" * 5000, "--out", "OUT"],
        ["--out", "OUT"],
        ["--products", "10"],
    ],
)
def test_bad_arguments_exit_2(argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = [str(tmp_path / "out") if arg == "OUT" else arg for arg in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("shop-mock generate: error:") and err.count("\n") == 1


def test_unwritable_directory_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    assert main(["--products", "10", "--out", str(blocker / "sub")]) == 2
    assert capsys.readouterr().err.startswith("shop-mock generate: error: cannot write")


def test_bad_counts_are_named_in_the_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Before: "invalid _positive_int value: 'many'" (a helper's name), and 10**20 wrote codes and order
    numbers the spec refuses."""
    assert main(["--products", "many", "--out", str(tmp_path)]) == 2
    assert capsys.readouterr().err == "shop-mock generate: error: argument --products: not a whole number: 'many'\n"
    assert main(["--products", str(10**20), "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"must be from 1 to {MAX_PRODUCTS}, got {10**20}" in err
    assert not any(tmp_path.iterdir()), "nothing written"


def test_the_largest_count_writes_only_what_the_spec_admits() -> None:
    """The bound is the spec's: the last order's number (an order per product at most) and the last
    product's code fit their schemas, read from the spec."""
    schemas = Spec.load().raw["components"]["schemas"]
    order_number = schemas["Order"]["properties"]["ordernumber"]
    assert order_number["maximum"] == FIRST_ORDER_NUMBER + MAX_PRODUCTS - 1, "the last number is the spec's highest"
    longest = max((product_code(index, MAX_PRODUCTS) for index in (0, MAX_PRODUCTS - 1)), key=len)
    assert len(longest) <= schemas["ProductRequest"]["properties"]["productcode"]["maxLength"], longest


def contents(directory: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(directory.iterdir())}


@pytest.mark.parametrize("sent", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_while_writing_leaves_the_directory_as_it_was(sent: signal.Signals, tmp_path: Path) -> None:
    """Before, Ctrl-C was a traceback and SIGTERM a silent kill, each leaving a truncated products.json over
    the earlier data set (and no orders), which `shop-mock --fixtures` then refused."""
    assert main(["--products", "40", "--out", str(tmp_path), "--seed", "1"]) == 0
    before = contents(tmp_path)
    command = [sys.executable, "-m", "mock_server", "generate", "--products", str(3_000_000), "--out", str(tmp_path)]
    child = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        started = time.monotonic()
        while not any(path.stat().st_size for path in tmp_path.glob(".generating-*/products.json")):
            assert child.poll() is None and time.monotonic() - started < 60, "the products were never being written"
            time.sleep(0.02)
        child.send_signal(sent)
        stdout, stderr = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()
    assert (child.returncode, stdout) == (2, "")
    assert stderr == f"shop-mock generate: error: interrupted by {sent.name}: nothing written to {tmp_path}\n"
    assert contents(tmp_path) == before, "the earlier data set whole, no staging directory left"
