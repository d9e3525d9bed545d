"""Serve for real on a loopback port, in a background thread: an ASGI app under uvicorn, a standard-library
HTTP server, or an asyncio connection handler."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from http.server import HTTPServer, ThreadingHTTPServer
from typing import Any

import httpx
import uvicorn

from tests.support.ports import BACKLOG, free_port

TRUSTED = httpx.create_ssl_context()
"""The one TLS context (certifi's CAs) of the tests' clients, to pass as `verify`: a client made without one
loads the bundle again, about 10 ms of CPU, and the default run makes hundreds of them (issue 37)."""


@contextlib.contextmanager
def running(app: Any, port: int | None = None, **options: Any) -> Iterator[str]:
    """Yield the origin (http://127.0.0.1:PORT) of `app` served by uvicorn until the block ends.

    `port`: one chosen beforehand, for an app that must know its own address (the realm's issuer);
    `options` go to `uvicorn.Config` (e.g. `mock_server.http.limits.uvicorn_options`).
    """
    port = port or free_port()
    realm = realm_of(app)
    if realm is not None:  # as `shop-mock` serves: the realm's key made before the first connection
        realm.make_keys()
    config = uvicorn.Config(
        app, host="127.0.0.1", port=port, log_level="warning", access_log=False, lifespan="off", **options
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def realm_of(app: Any) -> Any:
    """The realm of the mock `app` serves, through the middleware wrapping it (each keeps the app it wraps
    as `app`: tests/support/faults.py, Starlette's), or None. A key made at the first token instead (40 to
    200 ms of CPU) can take a second on a loaded machine, inside the suite's request deadline."""
    while app is not None:
        realm = getattr(app, "realm", None)
        if realm is not None:
            return realm
        app = getattr(app, "app", None)
    return None


class ThreadedServer(ThreadingHTTPServer):
    """The standard library's server with a thread per connection, listening with the tests' BACKLOG."""

    request_queue_size = BACKLOG


@contextlib.contextmanager
def serving_stdlib(server: HTTPServer) -> Iterator[str]:
    """Yield the origin (http://127.0.0.1:PORT) of `server`, the standard library's, bound on loopback and
    serving on a thread until the block ends."""
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]
"""What serves one connection, as `asyncio.start_server` calls it."""


@contextlib.contextmanager
def serving_streams(handle: Handler, *, limit: int = 2**16) -> Iterator[str]:
    """Yield the origin (http://127.0.0.1:PORT) of `handle` serving each connection (its reader's buffer
    `limit` bytes) on a thread's event loop until the block ends; then the connections still open are
    cancelled."""
    started: list[tuple[asyncio.AbstractEventLoop, asyncio.Event, int]] = []
    ready = threading.Event()

    async def serve() -> None:
        stop = asyncio.Event()
        listener = await asyncio.start_server(handle, "127.0.0.1", 0, limit=limit, backlog=BACKLOG)
        async with listener:
            started.append((asyncio.get_running_loop(), stop, listener.sockets[0].getsockname()[1]))
            ready.set()
            await stop.wait()

    thread = threading.Thread(target=asyncio.run, args=(serve(),), daemon=True)
    thread.start()
    if not ready.wait(10):
        raise RuntimeError("the asyncio server did not start")
    loop, stop, port = started[0]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        loop.call_soon_threadsafe(stop.set)
        thread.join(timeout=10)
