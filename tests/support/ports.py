"""Loopback ports for the servers the tests start: each one given to one caller, across every test process.

A port found with `bind(port 0)` and closed is free only until someone else binds it. A child server
binds it a second or two later, once it has imported its stack. Meanwhile another test process, an
in-process server on port 0 or an outgoing connection could take the same port from the kernel's
ephemeral range. The child then cannot listen, and the test's probe may be answered by someone else's
server. CI most likely saw that once: a test of the mock's log read no line at all, not even its probes'.

So the ports given here come from below the ephemeral range, where the kernel picks none. Each is
claimed by a file in a directory shared by the user's test processes, so no two processes take
the same port within `CLAIM_S`. A port is given only if it can be bound at that moment.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import random
import socket
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

FIRST = 11_000  # Above the ports browsers refuse to connect to (up to 10080).
EPHEMERAL = Path("/proc/sys/net/ipv4/ip_local_port_range")
CLAIMS = Path(tempfile.gettempdir()) / f"shop-tests-ports-{os.getuid()}"
CLAIM_S = 120.0  # Longer than any server's start: a claim older than this can be taken again.
BACKLOG = 2048
"""listen()'s backlog of the servers the tests run themselves, as uvicorn's and gunicorn's. The standard
library's 5 overflows when a burst of connections (a race's, a probe's wave of 25) arrives while the accept
loop lags on a loaded machine: the kernel drops a connection's SYN and the client retries it a second later."""


def usable_ports() -> range:
    """The ports below the kernel's ephemeral range (Linux's default starts at 32768)."""
    try:
        low = int(EPHEMERAL.read_text(encoding="ascii").split()[0])
    except (OSError, ValueError, IndexError):
        low = 32_768
    return range(FIRST, max(low, FIRST + 1_000))


USABLE = usable_ports()  # Read once: the range does not change while the tests run.


def _walk() -> Iterator[int]:
    """The usable ports from a random one on, round and round, so that the processes start apart."""
    return itertools.islice(itertools.cycle(USABLE), random.randrange(len(USABLE)), None)


_PORTS = _walk()


def claimed(port: int) -> bool:
    """Whether this process now holds `port`'s claim (made, or taken over from a claim older than `CLAIM_S`)."""
    CLAIMS.mkdir(exist_ok=True)
    claim = CLAIMS / str(port)
    with contextlib.suppress(FileNotFoundError):
        if time.time() - claim.stat().st_mtime > CLAIM_S:
            claim.unlink()  # Two processes taking over one stale claim in the same instant are not told apart.
    try:
        os.close(os.open(claim, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
    except FileExistsError:
        return False
    return True


def bindable(port: int) -> bool:
    """Whether a server could listen on `port` of 127.0.0.1 now."""
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port() -> int:
    """A loopback port no other test process was given within `CLAIM_S`, and free now."""
    for port in itertools.islice(_PORTS, len(USABLE)):
        if bindable(port) and claimed(port):
            return port
    raise RuntimeError(f"no free loopback port from {FIRST}: every one is bound or claimed (see {CLAIMS})")
