"""Every request the suite makes is bounded in time and in size, whichever HTTP client sends it.

A target may trickle its headers or body one byte at a time, send an endless body, a huge one, or a
small gzip body that inflates to gigabytes. So each request gets a total deadline (connect, headers and
body together: every socket read waits at most what is left of it, not a fresh timeout per read) and its
body is read up to a maximum size, decompressed bytes counted, in small pieces. The domain tests' httpx
client gets this through an httpcore network backend, Schemathesis' requests session through a
transport adapter; both raise `ResponseTooLarge` beyond the size, and their usual timeout errors at the
deadline.
"""

from __future__ import annotations

import contextlib
import io
import socket
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import httpcore
import httpx
import requests
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import DecodeError, ProtocolError, ReadTimeoutError

from contract_tests.keyring import Keyring
from contract_tests.options import DEFAULT_DEADLINE, DEFAULT_MAX_RESPONSE_SIZE

READ_PIECE = 16 * 1024
"""The most one socket read returns: a gzip piece this small inflates to at most ~16 MiB."""


@dataclass(frozen=True)
class Limits:
    deadline: float = DEFAULT_DEADLINE
    """Seconds for one whole request: connect, send, headers and body."""
    max_response_size: int = DEFAULT_MAX_RESPONSE_SIZE
    """Bytes of one response body, after decompression."""


class ResponseTooLarge(Exception):
    """A response body went past `Limits.max_response_size`; reading stopped there."""

    def __init__(self, method: str, url: str, limit: int) -> None:
        super().__init__(f"the answer to {method} {url} is larger than {limit} bytes (--max-response-size)")
        self.method, self.url, self.limit = method, url, limit


_clock = threading.local()


@contextlib.contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Every socket operation of this thread inside the block shares one deadline, `seconds` from now."""
    _clock.expires = time.monotonic() + seconds
    try:
        yield
    finally:
        _clock.expires = None


def remaining(timeout: float | None) -> float | None:
    """`timeout` shortened to what is left of the thread's deadline; TimeoutError once it has passed."""
    expires = getattr(_clock, "expires", None)
    if expires is None:
        return timeout
    left: float = expires - time.monotonic()
    if left <= 0:
        raise TimeoutError("the request's deadline passed")
    return left if timeout is None else min(timeout, left)


def read_bounded(chunks: Iterable[bytes], limit: int, method: str, url: str) -> bytes:
    body = bytearray()
    for chunk in chunks:
        body += chunk
        if len(body) > limit:
            raise ResponseTooLarge(method, url, limit)
    return bytes(body)


# httpx (the domain tests) ------------------------------------------------------------------------------


class _DeadlineStream(httpcore.NetworkStream):
    def __init__(self, stream: httpcore.NetworkStream) -> None:
        self._stream = stream

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        try:
            left = remaining(timeout)
        except TimeoutError as exc:
            raise httpcore.ReadTimeout(str(exc)) from exc
        return self._stream.read(min(max_bytes, READ_PIECE), left)

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        try:
            left = remaining(timeout)
        except TimeoutError as exc:
            raise httpcore.WriteTimeout(str(exc)) from exc
        self._stream.write(buffer, left)

    def close(self) -> None:
        self._stream.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None) -> Any:
        try:
            left = remaining(timeout)
        except TimeoutError as exc:
            raise httpcore.ConnectTimeout(str(exc)) from exc
        return _DeadlineStream(self._stream.start_tls(ssl_context, server_hostname, left))

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


class _DeadlineBackend(httpcore.NetworkBackend):
    def __init__(self) -> None:
        self._backend = httpcore.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Any = None,
    ) -> httpcore.NetworkStream:
        try:
            left = remaining(timeout)
        except TimeoutError as exc:
            raise httpcore.ConnectTimeout(str(exc)) from exc
        return _DeadlineStream(self._backend.connect_tcp(host, port, left, local_address, socket_options))

    def sleep(self, seconds: float) -> None:
        self._backend.sleep(seconds)


def httpx_client(limits: Limits) -> httpx.Client:
    """A client whose requests, sent inside `deadline(...)`, end by it (read the body with `read_body`)."""
    transport = httpx.HTTPTransport()
    # httpx has no parameter for httpcore's `network_backend`; the pool is what HTTPTransport would build.
    pool = httpcore.ConnectionPool(ssl_context=httpx.create_ssl_context(), network_backend=_DeadlineBackend())
    transport._pool = pool
    # Only encodings that inflate piece by piece (a piece of READ_PIECE bytes at a time).
    headers = {"Accept-Encoding": "gzip, deflate"}
    return httpx.Client(transport=transport, timeout=limits.deadline, headers=headers)


def send_httpx(client: httpx.Client, request: httpx.Request, limits: Limits) -> httpx.Response:
    """Send `request` within the deadline; the answer with its body read (at most the size limit)."""
    with deadline(limits.deadline):
        response = client.send(request, stream=True)
        try:
            body = read_bounded(response.iter_bytes(), limits.max_response_size, request.method, str(request.url))
        finally:
            response.close()
    # The body is decoded already: the copy keeps every header but the encoding, so it is not decoded twice.
    headers = [(k, v) for k, v in response.headers.multi_items() if k.lower() != "content-encoding"]
    return httpx.Response(response.status_code, headers=headers, content=body, request=request)


# requests (Schemathesis) ---------------------------------------------------------------------------------


class _DeadlineSocket:
    """A socket whose every read and write waits at most what is left of the thread's deadline."""

    def __init__(self, sock: Any) -> None:
        self._sock = sock
        self._timeout: float | None = sock.gettimeout()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sock, name)

    def settimeout(self, timeout: float | None) -> None:
        self._timeout = timeout

    def gettimeout(self) -> float | None:
        return self._timeout

    def recv_into(self, buffer: Any, nbytes: int = 0, flags: int = 0) -> int:
        self._sock.settimeout(remaining(self._timeout))
        view = memoryview(buffer)[: min(nbytes or len(buffer), READ_PIECE)]
        count: int = self._sock.recv_into(view, 0, flags)
        return count

    def recv(self, bufsize: int, flags: int = 0) -> bytes:
        self._sock.settimeout(remaining(self._timeout))
        data: bytes = self._sock.recv(min(bufsize, READ_PIECE), flags)
        return data

    def sendall(self, data: Any, flags: int = 0) -> None:
        self._sock.settimeout(remaining(self._timeout))
        self._sock.sendall(data, flags)

    def send(self, data: Any, flags: int = 0) -> int:
        self._sock.settimeout(remaining(self._timeout))
        sent: int = self._sock.send(data, flags)
        return sent

    def makefile(self, mode: str = "r", buffering: int | None = None, **_: Any) -> io.BufferedReader:
        """http.client reads the status line, headers and body through this file, so through `recv_into`."""
        return io.BufferedReader(socket.SocketIO(self, "rb"))  # type: ignore[arg-type]

    def _decref_socketios(self) -> None:
        """The file above holds no reference on the real socket."""


class _DeadlineHTTPConnection(HTTPConnection):
    def connect(self) -> None:
        if self.timeout is None or isinstance(self.timeout, int | float):  # not urllib3's "default" sentinel
            self.timeout = remaining(self.timeout)
        super().connect()
        self.sock = _DeadlineSocket(self.sock)


class _DeadlineHTTPSConnection(_DeadlineHTTPConnection, HTTPSConnection):
    """The same `connect`, around HTTPSConnection's (the handshake counts against the deadline too)."""


class _Pool(HTTPConnectionPool):
    ConnectionCls = _DeadlineHTTPConnection


class _TLSPool(HTTPSConnectionPool):
    ConnectionCls = _DeadlineHTTPSConnection


class BoundedAdapter(HTTPAdapter):
    """requests' adapter with the deadline and the size limit; the body is read here, in pieces.

    With a keyring, each request carries the current credentials, each answer is reported to the
    keyring, and a request it renewed the token for is sent once more.
    """

    def __init__(self, limits: Limits, keyring: Keyring | None = None, expected: Mapping[str, str] = {}) -> None:
        self.limits = limits
        self.keyring = keyring
        self.expected = dict(expected)
        """The surface's own credential headers, as at the start."""
        super().__init__()

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = {"http": _Pool, "https": _TLSPool}

    def send(self, request: requests.PreparedRequest, *args: Any, **kwargs: Any) -> requests.Response:
        if self.keyring is None:
            return self._send(request, *args, **kwargs)
        request.headers.update(self.keyring.current(request.headers))
        response = self._send(request, *args, **kwargs)
        if self.keyring.answered(request.headers, response.status_code, self.expected):
            request.headers.update(self.keyring.current(self.expected))
            response = self._send(request, *args, **kwargs)
            self.keyring.answered(request.headers, response.status_code, self.expected)
        return response

    def _send(self, request: requests.PreparedRequest, *args: Any, **kwargs: Any) -> requests.Response:
        kwargs["stream"] = True
        with deadline(self.limits.deadline):
            response = super().send(request, *args, **kwargs)
            method, url = request.method or "", request.url or ""
            try:
                chunks = response.raw.stream(READ_PIECE, decode_content=True)
                body = read_bounded(chunks, self.limits.max_response_size, method, url)
            except (TimeoutError, ReadTimeoutError) as exc:
                # Worded as urllib3 words it: Schemathesis reads the timeout back from this message.
                late = ReadTimeoutError(None, url, f"Read timed out. (read timeout={self.limits.deadline:g})")  # type: ignore[arg-type]
                raise requests.exceptions.ReadTimeout(late, request=request) from exc
            except ProtocolError as exc:
                raise requests.exceptions.ChunkedEncodingError(exc, request=request) from exc
            except DecodeError as exc:
                raise requests.exceptions.ContentDecodingError(exc, request=request) from exc
            finally:
                response.close()
        response._content = body  # requests' own cache of the body, as Schemathesis sets it too
        response._content_consumed = True
        return response


def bounded_session(
    session: requests.Session, limits: Limits, keyring: Keyring | None = None, expected: Mapping[str, str] = {}
) -> requests.Session:
    """`session` with every request going through a `BoundedAdapter` (mounted once)."""
    if not isinstance(session.get_adapter("http://"), BoundedAdapter):
        adapter = BoundedAdapter(limits, keyring, expected)
        session.mount("http://", adapter)
        session.mount("https://", adapter)
    return session
