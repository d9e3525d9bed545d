"""A file the suite writes (a report, the JUnit file, a baseline) appears whole or not at all.

A reader of the report directory (`merge`, `replay`, a CI step uploading it) must never find half a
file, nor an empty one. So the bytes go to a temporary file beside the final one, in the same
directory so that the rename cannot cross file systems. It is flushed to the disk and then renamed
over the final name at once (`os.replace`). A crash or a signal before the rename leaves the previous
file, or none.

A second Ctrl-C ends the process at once, by `os._exit` (run/interrupts.py), which runs no `finally`.
So the temporaries being written are listed here before they are created, and the signal handler
removes them first (`discard_unfinished`). Their names start with a dot and end in `.tmp`, so a file
left by a `kill -9` is never taken for a report. For `findings.json` it is `.findings.json.1a2b3c4d.tmp`.

A path that names no regular file is not renamed over. A symbolic link stays, and the file it names is
replaced. A device or a pipe (`--junit-xml /dev/stdout`) is written into as it is. A rename would put a
plain file in its place, even in /dev when the suite runs as root, as it does in CI containers.

A file others write to as well is appended to instead (`append`), never renamed over, because their
part would be lost. GitHub's job summary is one, since each step of a job adds to it. The addition is
whole or absent all the same. It is one write, with the signals that end the process held until it is
whole or taken back.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import stat
from pathlib import Path

_UNFINISHED: set[Path] = set()
"""The temporaries being written, each listed before it is created and unlisted once renamed or removed."""


def temporary_for(path: Path) -> Path:
    """A fresh name for `path`'s temporary, beside it, never one a reader takes for `path`."""
    return path.with_name(f".{path.name}.{os.urandom(4).hex()}.tmp")


def write(path: Path, data: bytes) -> None:
    """Replace `path` with `data` at once, or write it into the device or pipe `path` is.

    `path` keeps its permissions when it exists, and otherwise gets the umask's default. Raises OSError
    when it cannot be written, with the temporary removed and `path` as it was."""
    kind = _kind(path)
    if kind is not None and stat.S_ISDIR(kind):
        raise IsADirectoryError(errno.EISDIR, "is a directory", str(path))
    if kind is not None and not stat.S_ISREG(kind):
        _write_through(path, data)
        return
    if path.is_symlink():
        path = Path(os.path.realpath(path))  # The link stays; the file it names is replaced.
    existing = None if kind is None else stat.S_IMODE(kind)  # The mode of the file named, through links.
    temporary = temporary_for(path)
    _UNFINISHED.add(temporary)  # Listed before it exists, so a signal just after its creation finds it.
    try:
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
        try:
            _write_all(descriptor, data)
            if existing is not None:
                os.fchmod(descriptor, existing)
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    finally:
        _UNFINISHED.discard(temporary)


_HELD = {signal.SIGINT, signal.SIGTERM}
"""The signals a handler ends the process on (run/interrupts.py). They are held while an append is made."""


def append(path: Path, data: bytes) -> None:
    """Add `data` at the end of `path` (made if missing), whole or not at all.

    Raises OSError when it cannot be added, with `path` as it was.

    It is one write to a descriptor opened to append, so the kernel places it after what others wrote.
    `_HELD` is blocked meanwhile, so a second Ctrl-C's handler, which ends the process, runs only after it.
    A write the file takes only part of, on a full disk or past a file size limit, is taken back. The
    file is then cut to its length before."""
    descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | os.O_CLOEXEC, 0o666)
    try:
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD)
        try:
            written = os.write(descriptor, data)
            if written < len(data):
                os.ftruncate(descriptor, os.fstat(descriptor).st_size - written)
                raise OSError(f"only {written} of {len(data)} bytes could be written (taken back)")
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)
    finally:
        os.close(descriptor)


def discard_unfinished() -> None:
    """Remove every temporary being written, from a signal handler about to end the process.

    The final files stay as they were, whole."""
    for temporary in list(_UNFINISHED):
        with contextlib.suppress(OSError):
            os.unlink(temporary)


def _kind(path: Path) -> int | None:
    """The mode of what `path` names, through links; None when nothing is there."""
    try:
        return os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return None


def _write_through(path: Path, data: bytes) -> None:
    """Write `data` into the device or pipe at `path`, all of it."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        _write_all(descriptor, data)
    finally:
        os.close(descriptor)


def _write_all(descriptor: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(descriptor, view) :]
