"""Reading a file someone names on a command line, at most so many bytes.

A wrong path (/dev/zero, a log, a disk image) given where a spec, a realm, its keys or a token belongs
is then one line of the command, not all the machine's memory."""

from __future__ import annotations

import errno
from pathlib import Path


class TooLarge(OSError):
    """A file past its reader's bound. Its `strerror` says so ("larger than N bytes"), as an OSError's says
    a file is not there, so a reader that names OSErrors names this one too."""


def read_at_most(path: Path, limit: int) -> bytes:
    """The bytes of `path`, TooLarge past `limit`; no more than `limit` + 1 of them are ever read."""
    with path.open("rb") as file:
        data = file.read(limit + 1)
    if len(data) > limit:
        raise TooLarge(errno.EFBIG, f"larger than {limit} bytes", str(path))
    return data
