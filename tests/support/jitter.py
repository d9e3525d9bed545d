"""A TCP proxy holding each piece of the upstream's answers for a random 0-50 ms: the order in which answers
on different connections come back is the network's, not the order of the requests.

Bytes pass unchanged, on one upstream connection per client connection. A request reaches the server as
it is sent (a held header or body too, as on a direct connection), and a connection either side closes is
closed on the other. It parses no HTTP, so it costs the tests little CPU.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import random
from urllib.parse import urlsplit

from tests.support.live import serving_streams

MOST_S = 0.05
"""The longest a piece of an answer is held."""
PIECE = 65536


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


async def _connection(
    host: str, port: int, most: float, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    """Serve one client connection on a connection of its own to the upstream (none: the client's is closed)."""
    try:
        upstream_reader, upstream_writer = await asyncio.open_connection(host, port)
    except OSError:
        writer.close()
        return
    await asyncio.gather(_pump(reader, upstream_writer, 0.0), _pump(upstream_reader, writer, most))


def jittering(upstream: str, most: float = MOST_S) -> contextlib.AbstractContextManager[str]:
    """The origin (http://127.0.0.1:PORT) of a proxy in front of `upstream` (an http origin), holding each
    piece of an answer up to `most` seconds (0: a plain relay, another origin for the same server), served
    until the block ends."""
    target = urlsplit(upstream)
    connection = functools.partial(_connection, target.hostname or "127.0.0.1", target.port or 80, most)
    return serving_streams(connection)
