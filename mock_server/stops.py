"""Ctrl-C and SIGTERM for shop-mock's one-shot subcommands, `generate` and `contract`.

The first signal raises `Interrupted` where the command is. The command says it in one line and exits 2.
What the command writes, it writes whole or not at all, so a file is renamed into place once written.
Such renames must not stop half-way, so `settled()` turns the signals off before them. Later signals
are ignored, so the cleanup the first one started runs to its end. This module uses only the standard
library, as `generate` does.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(Exception):
    """Ctrl-C or SIGTERM, before what the command writes was in place."""


class Stops:
    """The handler of SIGINT and SIGTERM while `installed`."""

    def __init__(self) -> None:
        self._raising = True

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        if self._raising:
            self._raising = False
            raise Interrupted(f"interrupted by {signal.Signals(signum).name}")

    def settled(self) -> None:
        """No signal raises any more: the command moves its files into place, which must not stop half-way."""
        self._raising = False

    @contextmanager
    def installed(self) -> Iterator[Stops]:
        previous = {each: signal.signal(each, self) for each in SIGNALS}
        try:
            yield self
        finally:
            for each, handler in previous.items():
                signal.signal(each, handler)
