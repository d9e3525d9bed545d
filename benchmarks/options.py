"""The benchmarks' option types: a number out of range or a missing tree is one line and exit 2, before any
server starts, never a traceback halfway through a run (`--rounds 0` was a median of nothing).

Each is an `argparse` type, so the error names the option: `error: argument --rounds: ...`.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")
MAX_SECONDS = 3600.0  # one measured run, warm-up or latency: an hour is past any use, and `inf` is a typo
MAX_COUNT = 10**9


def digits(text: str) -> bool:
    """Whether `text` is ASCII digits only: `str.isdigit` is true of "²" too, which `int` refuses."""
    return text.isascii() and text.isdigit()


def _whole(text: str, least: int) -> int:
    if not digits(text) or not least <= int(text) <= MAX_COUNT:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number from {least} to {MAX_COUNT}")
    return int(text)


def count(text: str) -> int:
    """A whole number from 1: rounds, requests, batches, workers."""
    return _whole(text, 1)


def count_or_none(text: str) -> int:
    """A whole number from 0, where 0 means none (`--throttle 0`: no throttled run; `--products 0`)."""
    return _whole(text, 0)


def _seconds(text: str, least: float, inclusive: bool) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    above = value >= least if inclusive else value > least
    if not (math.isfinite(value) and above and value <= MAX_SECONDS):
        bound = "from" if inclusive else "more than"
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds {bound} {least:g} to {MAX_SECONDS:g}")
    return value


def seconds(text: str) -> float:
    """A length of time more than 0 (a measured run)."""
    return _seconds(text, 0.0, inclusive=False)


def seconds_or_none(text: str) -> float:
    """A length of time from 0 (a warm-up, a latency)."""
    return _seconds(text, 0.0, inclusive=True)


def port(text: str) -> int:
    """A TCP port to listen on."""
    if not digits(text) or not 1 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port from 1 to 65535")
    return int(text)


def tree(text: str) -> Path:
    """An earlier tree to measure beside this one (a `git archive` or a checkout): a directory that exists."""
    path = Path(text)
    if not path.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is not a directory (a git archive of an earlier commit)")
    return path


def comma_list(item: Callable[[str], T]) -> Callable[[str], list[T]]:
    """A comma-separated list, each item of type `item`."""

    def parse(text: str) -> list[T]:
        return [item(part) for part in text.split(",")]

    return parse


def latency_range(parser: argparse.ArgumentParser, low: float, high: float) -> None:
    """`--min` and `--max` of a latency: the first no more than the second."""
    if low > high:
        parser.error(f"--min ({low:g} s) is more than --max ({high:g} s)")


def one_of(*names: str) -> Callable[[str], str]:
    """One of `names`."""

    def parse(text: str) -> str:
        if text not in names:
            raise argparse.ArgumentTypeError(f"{text!r} is not one of {', '.join(names)}")
        return text

    return parse
