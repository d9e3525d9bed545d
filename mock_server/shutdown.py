"""How the mock stops: within its grace (`--shutdown-timeout`) of SIGINT or SIGTERM, at once on a second signal.

It exits with code 0, in one process or with `--workers N`.

Asked to stop, uvicorn closes its listening socket and the idle connections, and lets the requests in
flight finish. After `timeout_graceful_shutdown` it cancels what still runs. The dashboard's live
streams end at once (`http.stopping`). Of the grace, `SETTLE_S` is left for the process's exit and
for what uvicorn does around that wait. It notices a signal within 0.1 s, and it pauses 0.1 s after
asking connections to close.

This module adds what uvicorn does not do:

- A second SIGTERM stops the mock at once. uvicorn stops at once only on a second SIGINT.
- A stop asked by SIGTERM exits 0. Once stopped, uvicorn raises the signal again with the handler it
  found, and the default one kills the process. `signals_as_ctrl_c` makes that handler Ctrl-C's.
- A stop asked while the mock still loads its data, before uvicorn handles signals, ends it there
  (exit 0). SIGINT too where the mock was started with it ignored, as a shell's background job is.
- With workers, the supervisor stops them at the first signal, where uvicorn's looks at its signals
  every half second. It kills them at a second, where uvicorn's waits for them whatever comes.
- A request task that uvicorn cancels, past the wait or at a second signal, is one line in the log
  (`CutRequests`). It is not an "Exception in ASGI application" with a traceback.

The Redis state stays whole whenever a worker stops, because each write is one script or one
transaction.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import socket
from types import FrameType
from typing import Any

import uvicorn
from uvicorn.supervisors import Multiprocess

SETTLE_S = 0.7  # The part of the grace left for uvicorn's steps around its wait, and for the process's exit.


def grace_options(seconds: float) -> dict[str, Any]:
    """The `uvicorn.Config` options that stop a server within `seconds` of a signal."""
    return {"timeout_graceful_shutdown": max(seconds - SETTLE_S, 0.0)}


def signals_as_ctrl_c() -> None:
    """Make SIGINT and SIGTERM, before uvicorn handles them and once it is done with them, end the process
    as Ctrl-C does.

    That raises KeyboardInterrupt, which the CLI takes as a stop (exit 0), not as death by the signal.
    uvicorn handles SIGINT while serving even where it was ignored, so the mock does from its start."""
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.default_int_handler)


class CutRequests(logging.Filter):
    """uvicorn's error record for a request task that ended cancelled, as one line.

    uvicorn cancels such tasks only when it stops, past its wait or at a second signal.

    This reads uvicorn's internals, and only here. Its `uvicorn.error` logger logs an exception out of
    the app with `exc_info`."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and isinstance(record.exc_info[1], asyncio.CancelledError):
            record.msg, record.args = "a request still running when the server stopped was cut", ()
            record.exc_info = record.exc_text = None
        return True


CUT_REQUESTS = CutRequests()


def log_cut_requests() -> None:
    """Install `CutRequests` on uvicorn's error logger. It is there once, because a logger keeps one of each filter."""
    logging.getLogger("uvicorn.error").addFilter(CUT_REQUESTS)


class StoppingServer(uvicorn.Server):
    """uvicorn's server, stopped at once by a second signal of either kind."""

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        log_cut_requests()
        await super().shutdown(sockets)

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        if self.should_exit:
            self.force_exit = True
        super().handle_exit(sig, frame)


class Workers(Multiprocess):
    """uvicorn's supervisor of worker processes, which stops them at the first signal and kills them at a second.

    The first SIGINT or SIGTERM stops the workers now, each within its grace."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, self.stop)

    def stop(self, sig: int, frame: FrameType | None) -> None:
        if not self.should_exit.is_set():
            self.should_exit.set()
            for sock in self.sockets:  # The workers close theirs, so a new client is refused, not kept waiting.
                sock.close()
            return
        for process in self.processes:
            if process.exitcode is None:
                process.process.kill()
