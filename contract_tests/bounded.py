"""Every request the suite makes is bounded in time and in size, whichever HTTP client sends it, and
read correctly however a real server answers.

A target may trickle its headers or body one byte at a time, send an endless body, a huge one, or a
small gzip body that inflates to gigabytes. So each request gets a total deadline (connect, headers and
body together: every socket read waits at most what is left of it, not a fresh timeout per read) and its
body is read up to a maximum size, decompressed bytes counted, in small pieces. The domain tests' httpx
client gets this through an httpcore network backend, Schemathesis' requests session through urllib3
connection pools whose sockets read within the deadline (urllib3 has no total deadline of its own);
both raise `ResponseTooLarge` beyond the size, and their usual timeout errors at the deadline.

Both clients also: advertise the same encodings (ACCEPT_ENCODING), skip interim 1xx answers, trust the
same certificates (`contract_tests.trust`), honour HTTP_PROXY/HTTPS_PROXY/NO_PROXY with the same bounds,
and send a request once more on a fresh connection when a kept-alive one broke before any byte of the
answer came (the server closed it while idle, as HTTP/1.1 allows), never when a fresh one failed.

Private internals touched, here only: httpx's `HTTPTransport._pool` and httpcore's
`ConnectionPool._network_backend` (httpx has no parameter for the backend), `httpx._utils.
get_environment_proxies` (httpx drops the environment's proxies once a transport is given), the socket's
`_io_refs`/`_decref_socketios` (http.client's file on a socket keeps it open until the file closes) and
`http.client.HTTPResponse._read_status` (http.client skips 100 Continue, no other 1xx).
"""

from __future__ import annotations

import contextlib
import http.client
import io
import socket
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

import httpcore
import httpx
import requests
import urllib3
from httpx._utils import get_environment_proxies
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import DecodeError, InsecureRequestWarning, ProtocolError, ReadTimeoutError

from contract_tests.keyring import Keyring
from contract_tests.options import DEFAULT_DEADLINE, DEFAULT_MAX_RESPONSE_SIZE, Options
from contract_tests.trust import Trust

T = TypeVar("T")
READ_PIECE = 16 * 1024
"""The most one socket read returns: a gzip piece this small inflates to at most ~16 MiB."""
ACCEPT_ENCODING = "gzip, deflate"
"""What both clients advertise: only encodings that inflate piece by piece (no br: one piece of it may
inflate past any limit)."""


@dataclass(frozen=True)
class Limits:
    """How every request is sent: its deadline, its size limit, and the certificates it trusts."""

    deadline: float = DEFAULT_DEADLINE
    """Seconds for one whole request: connect, send, headers and body."""
    max_response_size: int = DEFAULT_MAX_RESPONSE_SIZE
    """Bytes of one response body, after decompression."""
    trust: Trust = field(default_factory=Trust)

    @classmethod
    def of(cls, options: Options) -> Limits:
        return cls(options.request_timeout, options.max_response_size, Trust(options.ca_bundle, options.insecure))


class ResponseTooLarge(Exception):
    """A response body went past `Limits.max_response_size`; reading stopped there."""

    def __init__(self, method: str, url: str, limit: int) -> None:
        super().__init__(f"the answer to {method} {url} is larger than {limit} bytes (--max-response-size)")
        self.method, self.url, self.limit = method, url, limit


class _Exchange(threading.local):
    """The request this thread is sending: its deadline, and what its connection has seen of it."""

    expires: float | None = None
    reused = False
    """It went out on a connection that had answered an earlier request."""
    heard = False
    """A byte of its answer came."""


_exchange = _Exchange()


@contextlib.contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Every socket operation of this thread inside the block shares one deadline, `seconds` from now."""
    _exchange.expires = time.monotonic() + seconds
    try:
        yield
    finally:
        _exchange.expires = None


def remaining(timeout: float | None) -> float | None:
    """`timeout` shortened to what is left of the thread's deadline; TimeoutError once it has passed."""
    expires = _exchange.expires
    if expires is None:
        return timeout
    left: float = expires - time.monotonic()
    if left <= 0:
        raise TimeoutError("the request's deadline passed")
    return left if timeout is None else min(timeout, left)


class _Turns:
    """One connection's turns: bytes written after an answer begin a new request on a reused connection."""

    def __init__(self) -> None:
        self._answered = False
        self._sending = False

    def sending(self) -> None:
        if not self._sending:
            self._sending = True
            _exchange.reused, _exchange.heard = self._answered, False

    def received(self, count: int) -> None:
        if count:
            self._sending = False
            self._answered = _exchange.heard = True


def _once_more_if_dropped(send: Callable[[], T], dropped: tuple[type[Exception], ...]) -> T:
    """`send()`, and once more if it raised `dropped` on a reused connection before any byte of an answer.

    A server may close a kept-alive connection while idle (RFC 9112, 9.6) just as a request goes out on
    it; browsers and requests send such a request again on a fresh connection. A fresh connection's
    failure, or one after the answer began, is the server's answer: it is raised.
    """
    _exchange.reused = _exchange.heard = False
    try:
        return send()
    except dropped:
        if not _exchange.reused or _exchange.heard:
            raise
    _exchange.reused = _exchange.heard = False
    return send()


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
        self._turns = _Turns()

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        try:
            left = remaining(timeout)
        except TimeoutError as exc:
            raise httpcore.ReadTimeout(str(exc)) from exc
        data = self._stream.read(min(max_bytes, READ_PIECE), left)
        self._turns.received(len(data))
        return data

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        try:
            left = remaining(timeout)
        except TimeoutError as exc:
            raise httpcore.WriteTimeout(str(exc)) from exc
        self._turns.sending()
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


def _httpx_transport(verify: Any, proxy: str | None = None) -> httpx.HTTPTransport:
    """httpx's own transport (direct or through `proxy`), its connections on the deadline backend."""
    transport = httpx.HTTPTransport(verify=verify, proxy=proxy, trust_env=False)
    transport._pool._network_backend = _DeadlineBackend()
    return transport


def httpx_client(limits: Limits) -> httpx.Client:
    """A client whose requests, sent with `send_httpx`, end by the deadline and the size limit.

    The environment's proxies are mounted as httpx would mount them (it ignores them once given a
    transport), each with the same bounds.
    """
    verify = limits.trust.ssl_context()
    mounts = {
        pattern: None if proxy is None else _httpx_transport(verify, proxy)
        for pattern, proxy in get_environment_proxies().items()
    }
    return httpx.Client(
        transport=_httpx_transport(verify),
        mounts=mounts,
        timeout=limits.deadline,
        headers={"Accept-Encoding": ACCEPT_ENCODING},
    )


def send_httpx(client: httpx.Client, request: httpx.Request, limits: Limits) -> httpx.Response:
    """Send `request` within the deadline; the answer with its body read (at most the size limit)."""
    request.read()  # a streamed body could not be sent a second time
    with deadline(limits.deadline):
        send = lambda: client.send(request, stream=True)  # noqa: E731
        response = _once_more_if_dropped(send, (httpx.NetworkError, httpx.RemoteProtocolError))
        try:
            body = read_bounded(response.iter_bytes(), limits.max_response_size, request.method, str(request.url))
        finally:
            response.close()
    # The body is decoded already: the copy keeps every header but the encoding, so it is not decoded twice.
    headers = [(k, v) for k, v in response.headers.multi_items() if k.lower() != "content-encoding"]
    return httpx.Response(response.status_code, headers=headers, content=body, request=request)


# requests (Schemathesis) ---------------------------------------------------------------------------------


class _DeadlineSocket:
    """A socket whose every read and write waits at most what is left of the thread's deadline.

    It only stands in front of the real socket, which keeps its ownership: a file made on it counts on
    the real socket, so http.client closing the connection while a response still reads its body (on
    `Connection: close`) leaves the descriptor open until that response closes too.
    """

    def __init__(self, sock: Any) -> None:
        self._sock = sock
        self._timeout: float | None = sock.gettimeout()
        self._turns = _Turns()

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
        self._turns.received(count)
        return count

    def recv(self, bufsize: int, flags: int = 0) -> bytes:
        self._sock.settimeout(remaining(self._timeout))
        data: bytes = self._sock.recv(min(bufsize, READ_PIECE), flags)
        self._turns.received(len(data))
        return data

    def sendall(self, data: Any, flags: int = 0) -> None:
        self._sock.settimeout(remaining(self._timeout))
        self._turns.sending()
        self._sock.sendall(data, flags)

    def send(self, data: Any, flags: int = 0) -> int:
        self._sock.settimeout(remaining(self._timeout))
        self._turns.sending()
        sent: int = self._sock.send(data, flags)
        return sent

    def makefile(self, mode: str = "r", buffering: int | None = None, **_: Any) -> io.BufferedReader:
        """http.client reads the status line, headers and body through this file, so through `recv_into`;
        like `socket.makefile`, the file holds a reference on the real socket until it is closed."""
        self._sock._io_refs += 1
        return io.BufferedReader(socket.SocketIO(self, "rb"))  # type: ignore[arg-type]

    def _decref_socketios(self) -> None:
        """The file above closed: the real socket closes now if it was closed meanwhile."""
        self._sock._decref_socketios()


class _FinalResponse(http.client.HTTPResponse):
    """http.client's response, skipping every interim 1xx answer (it skips only 100) but 101."""

    def _read_status(self) -> tuple[str, int, str]:
        while True:
            version, status, reason = super()._read_status()  # type: ignore[misc]  # not in typeshed
            if not 100 < status < 200 or status == 101:
                return version, status, reason
            http.client.parse_headers(self.fp)


class _DeadlineHTTPConnection(HTTPConnection):
    response_class = _FinalResponse

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


POOLS = {"http": _Pool, "https": _TLSPool}


class BoundedAdapter(HTTPAdapter):
    """requests' adapter with the deadline and the size limit; the body is read here, in pieces.

    Requests go direct or through a proxy (requests picks it from the environment) on the same bounded
    pools, and verify certificates as `Limits.trust` says, whatever requests read from the environment.
    With a keyring, each request carries the current credentials, each answer is reported to the
    keyring, and a request it renewed the token for is sent once more.
    """

    def __init__(self, limits: Limits, keyring: Keyring | None = None, expected: Mapping[str, str] = {}) -> None:
        self.limits = limits
        self.keyring = keyring
        self.expected = dict(expected)
        """The surface's own credential headers, as at the start."""
        self.verify = limits.trust.verify()
        if limits.trust.insecure:  # said once, by the CLI; not once per request
            urllib3.disable_warnings(InsecureRequestWarning)
        super().__init__()

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = POOLS

    def proxy_manager_for(self, proxy: str, **proxy_kwargs: Any) -> Any:
        manager = super().proxy_manager_for(proxy, **proxy_kwargs)
        manager.pool_classes_by_scheme = POOLS
        return manager

    def send(self, request: requests.PreparedRequest, *args: Any, **kwargs: Any) -> requests.Response:
        kwargs["verify"] = self.verify
        request.headers.setdefault("Accept-Encoding", ACCEPT_ENCODING)
        if self.keyring is None:
            return self._send(request, **kwargs)
        request.headers.update(self.keyring.current(request.headers))
        response = self._send(request, **kwargs)
        if self.keyring.answered(request.headers, response.status_code, self.expected):
            request.headers.update(self.keyring.current(self.expected))
            response = self._send(request, **kwargs)
            self.keyring.answered(request.headers, response.status_code, self.expected)
        return response

    def _send(self, request: requests.PreparedRequest, **kwargs: Any) -> requests.Response:
        kwargs["stream"] = True
        with deadline(self.limits.deadline):
            send = lambda: super(BoundedAdapter, self).send(request, **kwargs)  # noqa: E731
            response = _once_more_if_dropped(send, (requests.exceptions.ConnectionError,))
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
