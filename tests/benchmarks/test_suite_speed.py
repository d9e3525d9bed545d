"""`python -m benchmarks suite_speed`'s options: a wrong one is one line and exit 2, before any run starts."""

from __future__ import annotations

import argparse

import pytest

from benchmarks import suite_speed


def test_worker_counts_take_numbers_and_auto() -> None:
    assert suite_speed.worker_counts("1,16,auto") == [1, 16, "auto"]


@pytest.mark.parametrize("text", ["0", "-1", "two", "1,,2", "1.5", "AUTO", "", "²"])
def test_a_wrong_worker_count_is_refused_naming_it(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="neither a whole number from 1 nor 'auto'"):
        suite_speed.worker_counts(text)


def test_an_unknown_profile_is_refused_naming_it() -> None:
    assert suite_speed.profile_names("default,fast") == ["default", "fast"]
    with pytest.raises(argparse.ArgumentTypeError, match="'slow' is not one of default, fast"):
        suite_speed.profile_names("default,slow")


@pytest.mark.parametrize("argv", [["--workers", "0"], ["--workers", "auto,x"], ["--profiles", "quick"]])
def test_the_command_exits_2_with_one_line(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        suite_speed.main(argv)
    assert exited.value.code == 2
    errors = capsys.readouterr().err.strip().splitlines()
    assert errors[-1].startswith("python -m benchmarks suite_speed: error: argument --")
    assert "Traceback" not in "\n".join(errors)
