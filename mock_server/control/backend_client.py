"""The validation proxy's one client of the backend, bounded in time, in size and in decompression.

A backend is a peer the mock does not control, and httpx bounds none of this by itself. Its timeout
applies to each network read, so a backend sending a byte every few seconds never trips it. A
streamed body is read for as long as the backend sends. A gzip body of a quarter of a MiB can inflate
to 256 MiB. So each exchange has these bounds:

- One deadline covers all of it: connecting, sending the request, and the head and the whole body of
  the answer. It is `deadline` seconds, set by `--proxy-timeout`.
- `MAX_HEAD_BYTES` caps the answer's head (status line and headers). It is the mock's own bound on a
  request's head, because httpx admits 100 KiB and the head is kept whole in the journal.
- `MAX_RECEIVED_BYTES` caps the body as received. Reading stops there.
- `MAX_DECODED_BYTES` caps the body decoded. A gzip or deflate body is inflated piece by piece, never
  past it. It is inflated only as a copy for validation (`decoded`). The client gets the body as
  received, with its Content-Encoding.

Each failure is a `BackendError` whose message names the backend and the limit it broke. The proxy
answers it with a 502. `Unreachable` means the connection was refused, and it is the one failure the
proxy may fall back on.
"""

from __future__ import annotations

import asyncio
import zlib
from dataclasses import dataclass

import httpx

from mock_server.http.limits import Limits
from mock_server.spec.quoting import cut

MAX_HEAD_BYTES = Limits.head_bytes  # A backend's status line and headers, bounded as a client's request head.
MAX_RECEIVED_BYTES = 10 * 1024 * 1024  # A backend's body as received, still encoded.
MAX_DECODED_BYTES = 10 * 1024 * 1024  # The same body with its Content-Encoding undone.
DECODERS = {"gzip": 47, "deflate": 15}  # zlib's `wbits`. 47 reads gzip (or zlib), and 15 reads zlib.
RawHeaders = list[tuple[bytes, bytes]]


class BackendError(Exception):
    """The backend gave no answer the proxy can pass on. The message says why, for a 502."""


class Unreachable(BackendError):
    """The backend refused the connection."""


class TooLarge(BackendError):
    """The backend's answer is past a cap.

    Its head is past `MAX_HEAD_BYTES`, its body past `MAX_RECEIVED_BYTES`, or its body decoded past
    `MAX_DECODED_BYTES`."""


@dataclass(frozen=True)
class Answer:
    status: int
    headers: RawHeaders  # As the backend sent them.
    body: bytes  # As received, so still in its Content-Encoding.


class BackendClient:
    """Exchanges with one backend, each bounded as the module docstring says."""

    def __init__(self, origin: str, deadline: float) -> None:
        self.origin = origin.rstrip("/")
        self.deadline = deadline
        # No connection is kept alive. So none is left open when the server stops its loop, because
        # the client has no hook to close them there.
        self.client = httpx.AsyncClient(
            timeout=deadline, follow_redirects=False, limits=httpx.Limits(max_keepalive_connections=0)
        )

    async def exchange(self, method: str, target: str, headers: RawHeaders, body: bytes) -> Answer:
        """The backend's answer to `method` `target` (path and query, as sent), read whole."""
        request = self.client.build_request(method, self.origin + target, headers=headers, content=body)
        try:
            async with asyncio.timeout(self.deadline):
                response = await self.client.send(request, stream=True)
                try:
                    received = await self.read(response)
                finally:
                    await response.aclose()
        except (TimeoutError, httpx.TimeoutException):
            raise BackendError(
                f"The backend {self.origin} did not answer within {self.deadline:g} s (the proxy's deadline)."
            ) from None
        except httpx.ConnectError as error:
            raise Unreachable(f"The backend {self.origin} refused the connection: {cut(str(error))}") from None
        except httpx.HTTPError as error:  # A broken answer, such as one cut short or not HTTP.
            raise BackendError(f"The backend {self.origin} did not answer: {cut(repr(error))}") from None
        return Answer(response.status_code, response.headers.raw, received)

    async def read(self, response: httpx.Response) -> bytes:
        """The body as received. It is refused (TooLarge) as soon as the head or the body is known to be too large."""
        head = len(response.reason_phrase) + sum(len(name) + len(value) + 4 for name, value in response.headers.raw)
        if head > MAX_HEAD_BYTES:
            raise TooLarge(
                f"The backend {self.origin} answered a head larger than {MAX_HEAD_BYTES} bytes (the proxy's limit)."
            )
        too_large = TooLarge(
            f"The backend {self.origin} answered a body larger than {MAX_RECEIVED_BYTES} bytes (the proxy's limit)."
        )
        declared = response.headers.get("content-length", "")
        if declared.isdecimal() and int(declared) > MAX_RECEIVED_BYTES:
            raise too_large
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.aiter_raw():
            size += len(chunk)
            if size > MAX_RECEIVED_BYTES:
                raise too_large
            chunks.append(chunk)
        return b"".join(chunks)


def decoded(body: bytes, encoding: str) -> bytes:
    """`body` with its content-`encoding` undone, which is identity or one of `DECODERS`.

    It is inflated piece by piece and never past `MAX_DECODED_BYTES` (TooLarge). A body that is not
    valid `encoding` raises ValueError."""
    if encoding == "identity":
        return body
    inflater = zlib.decompressobj(wbits=DECODERS[encoding])
    pieces: list[bytes] = []
    size = 0
    pending = body
    try:
        while not inflater.eof:
            piece = inflater.decompress(pending, MAX_DECODED_BYTES + 1 - size)
            pending = inflater.unconsumed_tail
            if not piece and not pending:
                break  # All of the body is read, and the stream is not at its end.
            size += len(piece)
            if size > MAX_DECODED_BYTES:
                raise TooLarge(
                    f"The backend's {encoding} body inflates past {MAX_DECODED_BYTES} bytes (the proxy's limit)."
                )
            pieces.append(piece)
    except zlib.error as error:
        raise ValueError(str(error)) from None
    if not inflater.eof:
        raise ValueError("the stream is cut short")
    return b"".join(pieces)
