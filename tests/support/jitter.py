"""A TCP proxy holding each piece of the upstream's answers for a random 0-50 ms: the order in which answers
on different connections come back is the network's, not the order of the requests.

Bytes pass unchanged, on one upstream connection per client connection. A request reaches the server as
it is sent (a held header or body too, as on a direct connection), and a connection either side closes is
closed on the other. It parses no HTTP, so it costs the tests little CPU.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import threading
from collections.abc import Iterator
from urllib.parse import urlsplit

MOST_S = 0.05
"""The longest a piece of an answer is held."""
PIECE = 65536
BACKLOG = 256
"""Connections waiting to be accepted: 16 workers and a race's burst of 24 requests at once."""
START_S = 10


async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, most: float) -> None:
    """Copy `reader` to `writer`, each piece `most` seconds late at most, until either side ends; then close
    `writer`."""
    try:
        while piece := await reader.read(PIECE):
            if most:
                await asyncio.sleep(random.uniform(0, most))
            writer.write(piece)
            await writer.drain()
    except ConnectionError:
        pass
    finally:
        writer.close()


async def _connection(host: str, port: int, client: tuple[asyncio.StreamReader, asyncio.StreamWriter]) -> None:
    """Serve one client connection on a connection of its own to the upstream (none: the client's is closed)."""
    reader, writer = client
    try:
        upstream_reader, upstream_writer = await asyncio.open_connection(host, port)
    except OSError:
        writer.close()
        return
    await asyncio.gather(_pump(reader, upstream_writer, 0.0), _pump(upstream_reader, writer, MOST_S))


@contextlib.contextmanager
def jittering(upstream: str) -> Iterator[str]:
    """Yield the origin (http://127.0.0.1:PORT) of a proxy in front of `upstream` (an http origin) until the
    block ends."""
    target = urlsplit(upstream)
    host, port = target.hostname or "127.0.0.1", target.port or 80
    started: list[tuple[asyncio.AbstractEventLoop, asyncio.Event, int]] = []
    ready = threading.Event()

    async def serve() -> None:
        stop = asyncio.Event()
        server = await asyncio.start_server(
            lambda r, w: _connection(host, port, (r, w)), "127.0.0.1", 0, backlog=BACKLOG
        )
        async with server:
            started.append((asyncio.get_running_loop(), stop, server.sockets[0].getsockname()[1]))
            ready.set()
            await stop.wait()
        # asyncio.run then cancels the connections still open, and each closes its sockets

    thread = threading.Thread(target=asyncio.run, args=(serve(),), daemon=True)
    thread.start()
    if not ready.wait(START_S):
        raise RuntimeError("the jitter proxy did not start")
    loop, stop, bound = started[0]
    try:
        yield f"http://127.0.0.1:{bound}"
    finally:
        loop.call_soon_threadsafe(stop.set)
        thread.join(START_S)
