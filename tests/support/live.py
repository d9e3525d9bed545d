"""Serve an ASGI app for real: uvicorn on a free loopback port, in a background thread."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from http.server import HTTPServer
from typing import Any

import uvicorn


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextlib.contextmanager
def running(app: Any, port: int | None = None, **options: Any) -> Iterator[str]:
    """Yield the origin (http://127.0.0.1:PORT) of `app` served by uvicorn until the block ends.

    `port`: one chosen beforehand, for an app that must know its own address (the realm's issuer);
    `options` go to `uvicorn.Config` (e.g. `mock_server.http.limits.uvicorn_options`).
    """
    port = port or free_port()
    realm = getattr(app, "realm", None)
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
