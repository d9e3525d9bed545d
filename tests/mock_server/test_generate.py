"""The benchmark data generator writes a consistent data set and rejects bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from mock_server.generate import main
from tests.support.fixture_rules import Dataset, check_consistency, load_dataset

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
