"""How the mock stops: within its grace (`--shutdown-timeout`) of SIGINT or SIGTERM, at once on a
second signal, with exit code 0, in one process or with `--workers N`.

uvicorn, asked to stop, closes its listening socket and the idle connections, lets the requests in
flight finish and after `timeout_graceful_shutdown` cancels what still runs; the dashboard's live
streams end at once (`http.stopping`). Of the grace, `SETTLE_S` is left for what uvicorn does
around that wait (it notices a signal within 0.1 s, pauses 0.1 s after asking connections to
close) and for the process's exit. What it does not do, and this module adds:
- a second SIGTERM (uvicorn: only a second SIGINT) stops it at once;
- a stop asked by SIGTERM exits 0: uvicorn raises the signal again once stopped, with the handler
  it found, and the default one kills the process (`exit_quietly_on_sigterm` makes it Ctrl-C's);
- with workers, the supervisor stops them at the first signal (uvicorn's looks at its signals every
  half second), and kills them at a second (uvicorn's waits for them whatever comes);
- a request task uvicorn cancels (past the wait, or at a second signal) is one line in the log, not
  an "Exception in ASGI application" with a traceback (`CutRequests`).
The Redis state stays whole whenever a worker stops: each write is one script or one transaction.
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

SETTLE_S = 0.7  # of the grace: uvicorn's steps around its wait, and the process's exit


def grace_options(seconds: float) -> dict[str, Any]:
    """The `uvicorn.Config` options that stop a server within `seconds` of a signal."""
    return {"timeout_graceful_shutdown": max(seconds - SETTLE_S, 0.0)}


def exit_quietly_on_sigterm() -> None:
    """SIGTERM, once uvicorn is done with it, ends the process as Ctrl-C does: KeyboardInterrupt, which
    the CLI takes as the end of serving (exit 0), not death by the signal."""
    signal.signal(signal.SIGTERM, signal.default_int_handler)


class CutRequests(logging.Filter):
    """uvicorn's error record for a request task that ended cancelled, as one line: uvicorn cancels
    them only when it stops (past its wait, or at a second signal).

    uvicorn's internals, read here only: its `uvicorn.error` logger logs an exception out of the app
    with `exc_info`."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and isinstance(record.exc_info[1], asyncio.CancelledError):
            record.msg, record.args = "a request still running when the server stopped was cut", ()
            record.exc_info = record.exc_text = None
        return True


CUT_REQUESTS = CutRequests()


def log_cut_requests() -> None:
    """Install `CutRequests` on uvicorn's error logger (once: a logger keeps one of each filter)."""
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
    """uvicorn's supervisor of worker processes: the first SIGINT or SIGTERM stops the workers now
    (each within its grace), a second one kills them."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, self.stop)

    def stop(self, sig: int, frame: FrameType | None) -> None:
        if not self.should_exit.is_set():
            self.should_exit.set()
            for sock in self.sockets:  # the workers close theirs: a new client is then refused, not kept waiting
                sock.close()
            return
        for process in self.processes:
            if process.exitcode is None:
                process.process.kill()
