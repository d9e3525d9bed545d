"""Signals timed on the creation of a file, for a test's child process (this directory on its PYTHONPATH).

With SHOP_TEST_SIGNALS_AT=DIR/NAME in its environment, the process sends itself SIGTERM, then SIGINT (or the
signals SHOP_TEST_SIGNALS names, e.g. `SIGINT`), the moment it has created NAME in DIR, or a temporary file
for it (a name holding NAME): an audit hook sees the file opened for writing, and the first function call
or return after that open (when the file exists, before a byte is written) sends the signals. An external
watcher of the directory would race the write, which takes microseconds; this hits the window every time,
as a user's unlucky second Ctrl-C does.

With SHOP_TEST_SIGNALS_ON=read too, the open that sends them is DIR/NAME's for reading: a stop in the
middle of reading a file (the mock's data set as it loads).
"""

from __future__ import annotations

import os
import signal
import sys
from types import FrameType
from typing import Any

_WATCHED = os.environ.get("SHOP_TEST_SIGNALS_AT")
_SENT = [signal.Signals[name] for name in os.environ.get("SHOP_TEST_SIGNALS", "SIGTERM SIGINT").split()]
_armed = _WATCHED is not None
_ON_READ = os.environ.get("SHOP_TEST_SIGNALS_ON") == "read"


def _writing(args: tuple[Any, ...]) -> bool:
    """Whether an "open" audit event's (path, mode, flags) opens a path for writing."""
    _, mode, flags = args
    if isinstance(mode, str):
        return any(letter in mode for letter in "wax+")
    return isinstance(flags, int) and bool(flags & (os.O_WRONLY | os.O_RDWR))


def _audit(event: str, args: tuple[Any, ...]) -> None:
    global _armed
    if not _armed or event != "open" or _WATCHED is None or not isinstance(args[0], str | bytes | os.PathLike):
        return
    path = os.path.realpath(os.fsdecode(args[0]))
    directory, name = os.path.split(_WATCHED)
    opened = (not _writing(args) and os.path.basename(path) == name) if _ON_READ else _writing(args)
    if os.path.dirname(path) == os.path.realpath(directory) and name in os.path.basename(path) and opened:
        _armed = False
        sys.setprofile(_signalled)


def _signalled(frame: FrameType, event: str, arg: object) -> None:
    """The first event after the open (the audit hook's own return aside): the file exists now."""
    if frame.f_code is _audit.__code__:
        return
    sys.setprofile(None)
    _send(_SENT)


def _send(signals: list[signal.Signals]) -> None:
    """Each of `signals` in turn, the next one even when the handler of one raises (as `merge`'s does)."""
    if signals:
        try:
            os.kill(os.getpid(), signals[0])
        finally:
            _send(signals[1:])


if _WATCHED is not None:
    sys.addaudithook(_audit)
