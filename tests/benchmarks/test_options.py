"""The benchmarks' option types (benchmarks/options.py), and every command refusing a wrong number with one
line and exit 2 before it starts a server."""

from __future__ import annotations

import argparse
import importlib
import math
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from benchmarks import gate_speed, options


@given(st.integers(min_value=1, max_value=options.MAX_COUNT))
def test_a_count_is_any_whole_number_from_1(number: int) -> None:
    assert options.count(str(number)) == number


@given(st.text(max_size=12) | st.sampled_from(["²", "\u0661", "1²", " 1", "1_000", "+1", "0x1"]))
def test_a_count_is_nothing_else(text: str) -> None:
    if text.isascii() and text.isdigit() and 1 <= int(text) <= options.MAX_COUNT:
        return
    with pytest.raises(argparse.ArgumentTypeError, match="is not a whole number from 1"):
        options.count(text)


def test_a_count_or_none_takes_0() -> None:
    assert options.count_or_none("0") == 0
    with pytest.raises(argparse.ArgumentTypeError):
        options.count_or_none("-1")


@given(st.floats(allow_nan=True, allow_infinity=True))
def test_seconds_are_finite_above_0_and_at_most_an_hour(value: float) -> None:
    text = repr(value)
    if math.isfinite(value) and 0 < value <= options.MAX_SECONDS:
        assert options.seconds(text) == value
    else:
        with pytest.raises(argparse.ArgumentTypeError, match="is not a number of seconds"):
            options.seconds(text)


@pytest.mark.parametrize("text", ["", "x", "1s", "nan", "-0.1", "inf", "3601"])
def test_seconds_or_none_refuses_what_is_not_a_time(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError):
        options.seconds_or_none(text)


def test_seconds_or_none_takes_0() -> None:
    assert options.seconds_or_none("0") == 0.0


@pytest.mark.parametrize("text", ["0", "65536", "-1", "80a", ""])
def test_a_port_is_from_1_to_65535(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="is not a port"):
        options.port(text)
    assert options.port("65535") == 65535


def test_a_tree_is_a_directory_that_exists(tmp_path: Path) -> None:
    assert options.tree(str(tmp_path)) == tmp_path
    with pytest.raises(argparse.ArgumentTypeError, match="is not a directory"):
        options.tree(str(tmp_path / "missing"))
    (tmp_path / "file").write_text("")
    with pytest.raises(argparse.ArgumentTypeError, match="is not a directory"):
        options.tree(str(tmp_path / "file"))


def test_a_list_checks_each_item() -> None:
    assert options.comma_list(options.count)("1,2,4") == [1, 2, 4]
    with pytest.raises(argparse.ArgumentTypeError, match="'0'"):
        options.comma_list(options.count)("1,0")
    with pytest.raises(argparse.ArgumentTypeError, match="'x' is not one of mock, drf"):
        options.comma_list(options.one_of("mock", "drf"))("mock,x")


def test_gate_speed_knows_the_variants() -> None:
    assert gate_speed.variant_names("") == []
    assert gate_speed.variant_names("product_without_msrp") == ["product_without_msrp"]
    with pytest.raises(argparse.ArgumentTypeError, match="unknown variant 'nope'"):
        gate_speed.variant_names("product_without_msrp,nope")


WRONG: list[tuple[str, list[str]]] = [  # a module of benchmarks/ and what its `main` is given
    ("throughput", ["--rounds", "0"]),
    ("throughput", ["--seconds", "-1"]),
    ("throughput", ["--baseline", "/nonexistent"]),
    ("asgi", ["--baseline", "/nonexistent"]),
    ("asgi", ["--baseline", ".", "--requests", "0"]),
    ("dashboard", ["--baseline", ".", "--batches", "0"]),
    ("shared_control", ["--baseline", ".", "--rounds", "0"]),
    ("metrics_cost", ["--batches", "0"]),
    ("gate_speed", ["--throttle", "-1"]),
    ("gate_speed", ["--min", "0.5", "--max", "0.1"]),
    ("gate_speed", ["--variants", "nope"]),
    ("race_cost", ["--rounds", "0"]),
    ("race_cost", ["--max", "nan"]),
    ("replicas", ["--workers", "1", "0"]),
    ("scale", ["--rounds", "0"]),
    ("sessions", ["--seconds", "0"]),
    ("sharding", ["--counts", "1,x"]),
    ("sharding", ["--targets", "prism"]),
    ("suite_speed", ["--rounds", "0", "--baseline", "."]),
    ("latency_proxy", ["--upstream", "http://127.0.0.1:1", "--port", "0"]),
]


@pytest.mark.parametrize(("module", "argv"), WRONG, ids=[f"{m} {' '.join(a)}" for m, a in WRONG])
def test_a_wrong_number_is_one_line_and_exit_2(
    module: str, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    main: Callable[[Sequence[str]], object] = importlib.import_module(f"benchmarks.{module}").main
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert ": error: argument --" in err.strip().splitlines()[-1] or ": error: --min" in err
