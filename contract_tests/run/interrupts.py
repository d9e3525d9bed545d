"""Ctrl-C, or SIGTERM, ends a run the way its time budget does.

SIGTERM comes from a process manager or a container runtime. The suite as PID 1 gets no default
action for it, so it is handled here. After the first signal, no request starts any more. The parts
in flight end within one request deadline. The reports say the run was stopped and what it did not
reach, and the exit code is 2.

A second signal stops the process at once, without the reports not yet written. A report file is
written whole or not at all (outcome/files.py). The one being written when the signal came is not
left behind, not even as its temporary.

`shop-contract merge` has no run to end, only files to read and write, and `replay` only requests each
said as it is judged. So their first signal stops them where they are (`stop_here`). The same one line,
exit 2 and files whole or absent follow.

Only `shop-contract`'s own process installs the handlers (`installed`). The pytest plugin leaves the
signals to pytest.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

from contract_tests.outcome import files

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(BaseException):
    """A first signal, raised by `stop_here` where the main thread is.

    It is a BaseException, as KeyboardInterrupt is. So no `except Exception` on the way takes it for an
    error of the command."""


def stop_here(reason: str) -> None:
    """The stop of a command with no run to end (`merge`, `replay`). It ends where it is.

    Each file it writes is whole or absent. outcome/files.py removes the temporary of the one being
    written when this passes through."""
    raise Interrupted(reason)


class Interrupts:
    """The signals a command received, and the stops (`Pacer.stop`, `stop_here`) a first one calls.

    A second signal ends the process with `at_once_exit`, the CLI's "could not finish". `ending` names
    what the first one ends, in the line it says."""

    def __init__(self, at_once_exit: int, ending: str = "the run") -> None:
        self.at_once_exit = at_once_exit
        self.ending = ending
        self.reason: str | None = None
        self._stops: list[Callable[[str], None]] = []
        self._lock = threading.RLock()  # Reentrant, because the handler may run while its own thread holds it.

    def on(self, stop: Callable[[str], None]) -> None:
        """Call `stop(reason)` at the first signal.

        A signal may have come already, before the run's pacer was made. Then `stop` is called at once."""
        with self._lock:
            self._stops.append(stop)
            reason = self.reason
        if reason is not None:
            stop(reason)

    def received(self, signum: int, frame: FrameType | None = None) -> None:
        """A signal handler. The first signal stops the run, and a second ends the process now."""
        name = signal.Signals(signum).name
        if self.reason is not None:
            files.discard_unfinished()  # os._exit runs no `finally`, so the temporary being written goes first.
            print(f"shop-contract: error: {name} again: stopped at once, no further report written", file=sys.stderr)
            os._exit(self.at_once_exit)  # The threads still waiting on the target are not waited for.
        with self._lock:
            self.reason = f"interrupted by {name}"
            stops = list(self._stops)
        print(f"shop-contract: {name}: ending {self.ending} (again to stop at once)", file=sys.stderr, flush=True)
        for stop in stops:
            stop(self.reason)

    @contextmanager
    def installed(self) -> Iterator[Interrupts]:
        """SIGINT and SIGTERM handled by `received` inside the block, in the main thread only."""
        if threading.current_thread() is not threading.main_thread():
            yield self
            return
        previous = {each: signal.signal(each, self.received) for each in SIGNALS}
        try:
            yield self
        finally:
            for each, handler in previous.items():
                signal.signal(each, handler)
