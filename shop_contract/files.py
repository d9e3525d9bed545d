"""Reading a file someone names on a command line, at most so many bytes.

A wrong path (/dev/zero, a log, a disk image) given where a spec, a realm, its keys or a token belongs
is then one line of the command, not all the machine's memory."""

from __future__ import annotations

import errno
from pathlib import Path


def read_at_most(path: Path, limit: int) -> bytes:
    """The bytes of `path`. An OSError whose `strerror` says so past `limit`, as for a file not there."""
    with path.open("rb") as file:
        data = file.read(limit + 1)
    if len(data) > limit:
        raise OSError(errno.EFBIG, f"larger than {limit} bytes", str(path))
    return data
