"""A hostile HTTP server below any framework: a raw loopback socket server answering chosen requests with
bytes a test decides (status line, header names and values, framing, chunk splits, body), and passing
every other request to a real upstream (the mock under uvicorn), byte for byte.

Each exchange is one connection: the request is read (head, then its Content-Length or chunked body),
answered, and the connection closed, so that an answer whose framing lies ends at the close instead of
keeping a client waiting. ASGI servers normalise what they send (header names, reason phrases); only a
raw socket lets a test send what a broken or malicious server would.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from tests.support.live import serving_streams

HEAD_LIMIT = 64 * 1024


@dataclass(frozen=True)
class RawAnswer:
    """An answer as bytes on the wire.

    `framing`: "length" (a Content-Length of the body), "chunked" (Transfer-Encoding, split at `splits`),
    "close" (no length: the body ends with the connection), or "short" (a Content-Length one larger
    than the body: the connection closes before it is whole).
    """

    status_line: bytes
    headers: tuple[tuple[bytes, bytes], ...] = ()
    body: bytes = b""
    framing: str = "length"
    splits: tuple[int, ...] = ()
    """Where the body is cut into chunks (chunked) or into separate writes (any framing)."""

    def pieces(self) -> list[bytes]:
        """What is written, in order: the head, then the body's pieces as framed."""
        cuts = sorted({cut for cut in self.splits if 0 < cut < len(self.body)})
        parts = [self.body[start:end] for start, end in zip([0, *cuts], [*cuts, len(self.body)], strict=True)]
        framing: list[tuple[bytes, bytes]] = []
        if self.framing == "length":
            framing = [(b"Content-Length", str(len(self.body)).encode())]
        elif self.framing == "short":
            framing = [(b"Content-Length", str(len(self.body) + 1).encode())]
        elif self.framing == "chunked":
            framing = [(b"Transfer-Encoding", b"chunked")]
            parts = [b"%x\r\n%s\r\n" % (len(part), part) for part in parts if part] + [b"0\r\n\r\n"]
        lines = [self.status_line, *(name + b": " + value for name, value in (*self.headers, *framing))]
        return [b"\r\n".join(lines) + b"\r\n\r\n", *parts]


@dataclass
class HostileServer:
    """Requests whose method and path match `method` and `path` (regexes) get `answer`; others go upstream."""

    upstream: str
    method: str
    path: str
    answer: RawAnswer = field(default_factory=lambda: RawAnswer(b"HTTP/1.1 204 No Content"))
    answered: int = 0
    """How many requests got `answer`."""

    async def exchange(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            body = await _body(reader, head)
            method, target = head.split(b" ", 2)[:2]
            path = urlsplit(target.decode("latin-1")).path
            if re.fullmatch(self.method, method.decode("latin-1")) and re.fullmatch(self.path, path):
                self.answered += 1
                for piece in self.answer.pieces():
                    writer.write(piece)
                    await writer.drain()
            else:
                writer.write(await self._upstream(head, body))
                await writer.drain()
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
            pass  # the client gave up (its deadline) or sent what this server does not read
        finally:
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()

    async def _upstream(self, head: bytes, body: bytes) -> bytes:
        """The upstream's whole answer to the same request, asked on a connection it closes after."""
        origin = urlsplit(self.upstream)
        reader, writer = await asyncio.open_connection(origin.hostname, origin.port)
        lines = [line for line in head.split(b"\r\n") if line and not line.lower().startswith(b"connection:")]
        lines = [line for line in lines if not line.lower().startswith(b"transfer-encoding:")]
        if body and not any(line.lower().startswith(b"content-length:") for line in lines):
            lines.append(b"Content-Length: " + str(len(body)).encode())
        writer.write(b"\r\n".join([*lines, b"Connection: close"]) + b"\r\n\r\n" + body)
        await writer.drain()
        answer = await reader.read()
        writer.close()
        return answer


async def _body(reader: asyncio.StreamReader, head: bytes) -> bytes:
    """The request's body: its Content-Length, or its chunks put together."""
    fields = dict(
        (name.strip().lower(), value.strip())
        for name, _, value in (line.partition(b":") for line in head.split(b"\r\n")[1:])
    )
    if fields.get(b"transfer-encoding", b"").lower() == b"chunked":
        body = b""
        while size := int((await reader.readuntil(b"\r\n")).split(b";")[0], 16):
            body += await reader.readexactly(size)
            await reader.readexactly(2)
        while await reader.readuntil(b"\r\n") != b"\r\n":  # trailers, up to the blank line
            pass
        return body
    return await reader.readexactly(int(fields.get(b"content-length", b"0")))


def serving(server: HostileServer) -> contextlib.AbstractContextManager[str]:
    """Serve `server` on a loopback port in a thread of its own, until the block ends; yield its origin."""
    return serving_streams(server.exchange, limit=HEAD_LIMIT)
