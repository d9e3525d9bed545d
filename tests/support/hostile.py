"""Hostile targets for the suite: the real mock, with one kind of request answered maliciously.

`Hostile` wraps a fresh mock (ASGI): requests matching `method` and `path` (regexes) get `answer`, every
other request (the suite's probe among them) goes to the mock. Header trickling happens below ASGI, so
`trickling_headers` is a raw socket server instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import re
import socket
import threading
import time
import zlib
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any

from mock_server.app import create_app
from mock_server.settings import Settings
from tests.support.ports import free_port

Scope = dict[str, Any]
Answer = Callable[[Scope, Any, Any], Awaitable[None]]
MIB = 1024 * 1024
SCREEN_ATTACK = "\x1b[2J\x1b[H\x1b[32mResult: no violation.\x1b[0m\x07\x00\x08\x0b\x0c\x1f\ud800\ufffe"
"""Clears the screen and fakes a green verdict; then characters XML 1.0 forbids."""


@dataclass
class Hostile:
    method: str
    path: str
    answer: Answer
    when: Callable[[Scope], bool] = lambda scope: True
    app: Any = None

    def __post_init__(self) -> None:
        self.app = self.app or create_app(Settings())

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if (
            scope["type"] == "http"
            and re.fullmatch(self.method, scope["method"])
            and re.fullmatch(self.path, scope["path"])
            and self.when(scope)
        ):
            await self.answer(scope, receive, send)
        else:
            await self.app(scope, receive, send)


async def _start(send: Any, status: int, headers: dict[str, str]) -> None:
    raw = [(name.encode(), value.encode("latin-1")) for name, value in headers.items()]
    await send({"type": "http.response.start", "status": status, "headers": raw})


async def _whole(send: Any, status: int, headers: dict[str, str], body: bytes) -> None:
    await _start(send, status, {**headers, "content-length": str(len(body))})
    await send({"type": "http.response.body", "body": body})


async def trickle_body(scope: Scope, receive: Any, send: Any) -> None:
    """A JSON body promised 100 bytes long, sent one byte every 50 ms (5 s, past the tests' deadline)."""
    await _start(send, 200, {"content-type": "application/json", "content-length": "100"})
    for _ in range(100):
        await send({"type": "http.response.body", "body": b" ", "more_body": True})
        await asyncio.sleep(0.05)
    await send({"type": "http.response.body", "body": b""})


async def endless_body(scope: Scope, receive: Any, send: Any) -> None:
    """Chunked JSON that never ends (capped at 4 GiB, so a test run cannot spin forever)."""
    await _start(send, 200, {"content-type": "application/json"})
    chunk = b"[" + b"0," * (MIB // 2)
    for _ in range(4096):
        await send({"type": "http.response.body", "body": chunk, "more_body": True})
    await send({"type": "http.response.body", "body": b""})


async def huge_body(scope: Scope, receive: Any, send: Any) -> None:
    """A 500 MiB body with its length announced."""
    size = 500 * MIB
    await _start(send, 200, {"content-type": "application/json", "content-length": str(size)})
    chunk = b" " * MIB
    for _ in range(size // MIB):
        await send({"type": "http.response.body", "body": chunk, "more_body": True})
    await send({"type": "http.response.body", "body": b""})


def _gzip_of_zeros(size: int) -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    piece = bytes(MIB)
    return b"".join([*(packer.compress(piece) for _ in range(size // MIB)), packer.flush()])


@functools.cache
def gzip_bomb_body() -> bytes:
    """512 MiB of zeros, about half a MiB on the wire."""
    return _gzip_of_zeros(512 * MIB)


async def gzip_bomb(scope: Scope, receive: Any, send: Any) -> None:
    await _whole(send, 200, {"content-type": "application/json", "content-encoding": "gzip"}, gzip_bomb_body())


async def html_page(scope: Scope, receive: Any, send: Any) -> None:
    """What a single-page-app dev server answers to anything: 200 and its index page."""
    page = b"<!doctype html><html><head><title>App</title></head><body><div id=root></div></body></html>"
    await _whole(send, 200, {"content-type": "text/html; charset=utf-8"}, page)


async def refuse_multipart(scope: Scope, receive: Any, send: Any) -> None:
    """415 to a body, without reading it (use with `when=multipart`)."""
    await _whole(send, 415, {"content-type": "text/plain"}, b"multipart is not supported")


def multipart(scope: Scope) -> bool:
    return dict(scope["headers"]).get(b"content-type", b"").startswith(b"multipart/")


def json_answer(body: bytes, status: int = 200, content_type: str = "application/json") -> Answer:
    async def answer(scope: Scope, receive: Any, send: Any) -> None:
        await _whole(send, status, {"content-type": content_type}, body)

    return answer


async def screen_attack(scope: Scope, receive: Any, send: Any) -> None:
    """A 400 problem whose text holds terminal escapes and control characters (raw, not JSON-escaped)."""
    body = '{"title": "Bad Request", "status": 400, "detail": "' + SCREEN_ATTACK + '"}'
    await _whole(send, 400, {"content-type": "application/problem+json"}, body.encode("utf-8", "surrogatepass"))


async def echo_headers(scope: Scope, receive: Any, send: Any) -> None:
    """A debug error page: the request's headers, in the body and in response headers."""
    sent = {name.decode(): value.decode("latin-1") for name, value in scope["headers"]}
    headers = {"content-type": "application/json", **{f"x-echo-{name}": value for name, value in sent.items()}}
    await _whole(send, 400, headers, json.dumps({"detail": "bad request", "headers": sent}).encode())


def refusing_after(requests: int) -> Callable[[Scope], bool]:
    """A `when` that lets the first `requests` through, then matches every request (credentials lost)."""
    seen = iter(range(requests))
    return lambda scope: next(seen, None) is None


async def unauthorized(scope: Scope, receive: Any, send: Any) -> None:
    await _whole(send, 401, {"content-type": "application/problem+json"}, b'{"title": "Unauthorized", "status": 401}')


@contextlib.contextmanager
def trickling_headers(probe_path: str, probe_body: bytes) -> Iterator[str]:
    """A raw HTTP server: GET `probe_path` gets `probe_body` at once; anything else gets its status line
    and headers one byte every 100 ms, for a minute. Yields the origin."""
    port = free_port()
    listener = socket.create_server(("127.0.0.1", port))
    stop = threading.Event()

    def serve(conn: socket.socket) -> None:
        with conn:
            conn.settimeout(60)
            request = b""
            while b"\r\n\r\n" not in request:
                data = conn.recv(65536)
                if not data:
                    return
                request += data
            method, target = request.split(b" ", 2)[:2]
            if method == b"GET" and target.split(b"?")[0].decode() == probe_path:
                head = f"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {len(probe_body)}"
                conn.sendall(head.encode() + b"\r\nconnection: close\r\n\r\n" + probe_body)
                return
            deadline = time.monotonic() + 60
            with contextlib.suppress(OSError):
                for byte in b"HTTP/1.1 200 OK\r\n" + b"x-slow: " + b"a" * 1000:
                    if stop.is_set() or time.monotonic() > deadline:
                        return
                    conn.sendall(bytes([byte]))
                    time.sleep(0.1)

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        stop.set()
        thread.join(timeout=5)
        listener.close()
