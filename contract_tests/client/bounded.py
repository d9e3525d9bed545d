"""Every request the suite makes is bounded in time and in size, whichever HTTP client sends it.

A target may trickle its headers or body one byte at a time. It may send an endless body, a huge one,
or a small gzip body that inflates to gigabytes. So each request gets a total deadline, and its body is
read up to a maximum size, in small pieces, counting decompressed bytes.
- The deadline covers connect, headers and body together. Every socket read waits at most what is
  left of it, not a fresh timeout per read.
- The deadline is no later than the end of the run's time budget (`Limits.seconds`).

Each client meets these rules in its own module. httpx, which the domain tests use, does so in
`bounded_httpx`. requests, which Schemathesis uses, does so in `bounded_requests`. Both raise
`ResponseTooLarge` beyond the size and their usual timeout errors at the deadline. Both ask for the
same encodings (ACCEPT_ENCODING) and trust the same certificates (`Trust`).

httpx and requests each read their own environment variables for certificates. httpx reads
SSL_CERT_FILE, and requests reads REQUESTS_CA_BUNDLE. Here the choice is made once, in this order.
- `--insecure` turns verification off, for a self-signed development certificate.
- `--ca-bundle FILE` comes next.
- Then SSL_CERT_FILE, then REQUESTS_CA_BUNDLE.
- Otherwise certifi's public CAs are trusted, as both clients do by default.

Both send a request once more on a fresh connection when a kept-alive one broke before any byte of the
answer came. The server then closed it while idle, as HTTP/1.1 allows. They never do so when a fresh
connection failed. Each connection's `Turns` tell the thread's `Exchange` which case it is.
"""

from __future__ import annotations

import contextlib
import functools
import os
import ssl
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import certifi

from contract_tests.client.pacing import Pacer, origin_of
from contract_tests.usage import UsageError

T = TypeVar("T")
READ_PIECE = 16 * 1024
"""The most one socket read returns. A gzip piece this small inflates to at most ~16 MiB."""
ACCEPT_ENCODING = "gzip, deflate"
"""What both clients advertise. It holds only encodings that inflate piece by piece. There is no br,
because one piece of it may inflate past any limit."""

ALPN = ("http/1.1",)
"""The application protocols the shared TLS context offers: HTTP/1.1 alone, as httpcore sets them."""
CA_VARIABLES = ("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE")
"""Environment variables naming a CA bundle, honoured in this order when `--ca-bundle` is not given."""


@dataclass(frozen=True)
class Trust:
    """Which TLS certificates the suite trusts. It gives the same answer for both of its HTTP clients."""

    ca_bundle: Path | None = None
    insecure: bool = False

    def bundle(self) -> tuple[str, str] | None:
        """The CA bundle to verify against and what named it. None means certifi's, or no verification."""
        if self.insecure:
            return None
        if self.ca_bundle is not None:
            return str(self.ca_bundle), "--ca-bundle"
        return next(((os.environ[name], name) for name in CA_VARIABLES if os.environ.get(name)), None)

    def verify(self) -> str | bool:
        """requests' `verify`, which is False, a bundle's path, or True (certifi)."""
        bundle = self.bundle()
        return not self.insecure if bundle is None else bundle[0]

    def ssl_context(self) -> ssl.SSLContext:
        """httpx's `verify`. Raises UsageError when the bundle cannot be read as certificates.

        One context serves every client of a trust and bundle: making one loads the bundle, about 25 ms of
        CPU, and a run makes several clients (each surface's, the domain checks', the bursts')."""
        return _ssl_context(self.insecure, self.bundle())


class SharedContext(ssl.SSLContext):
    """A TLS context that clients on many threads share: its ALPN protocols are set once, never again.

    httpcore sets a context's ALPN protocols before each connection it opens, and CPython then frees the
    list that another thread may be copying into its own new connection with the GIL released
    (python/cpython#141012). That thread's handshake goes out garbled, and the server refuses it (nginx:
    "bad extension"). Setting the protocols it already holds is therefore no call at all."""

    alpn: tuple[str, ...] = ()

    def set_alpn_protocols(self, alpn_protocols: Iterable[str]) -> None:
        protocols = tuple(alpn_protocols)
        if protocols != self.alpn:
            super().set_alpn_protocols(protocols)
            self.alpn = protocols


@functools.lru_cache(maxsize=8)
def _ssl_context(insecure: bool, bundle: tuple[str, str] | None) -> SharedContext:
    """Made as `ssl.create_default_context` and httpx make one (they cannot make a subclass): the
    certificate and the host name verified against the bundle (certifi's by default), or nothing verified."""
    context = SharedContext(ssl.PROTOCOL_TLS_CLIENT)
    context.set_alpn_protocols(ALPN)  # Before any thread shares it.
    if insecure:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        return context
    path, named = bundle or (certifi.where(), "certifi's bundle")
    try:
        context.load_verify_locations(cafile=path)
    except (OSError, ssl.SSLError) as exc:
        raise UsageError(f"{named} {path}: not a readable PEM file of CA certificates ({exc})") from exc
    return context


@dataclass(frozen=True)
class Limits:
    """How every request is sent: its deadline, its size limit, and the certificates it trusts.

    The run's options make one (`client.target.limits_of`)."""

    deadline: float
    """Seconds for one whole request, covering connect, send, headers and body."""
    max_response_size: int
    """Bytes of one response body, after decompression."""
    trust: Trust = field(default_factory=Trust)
    pacer: Pacer | None = None
    """The run's gate on requests in flight, on the waits a target asks for and on the time budget.

    None means unpaced."""
    held: bool = True
    """Whether requests wait for the pacer's limit and pauses.

    It is False for the capacity probe's batch, which is sent at once and never again on a 429. The time
    budget holds either way."""

    def paced(
        self, send: Callable[[], T], status: Callable[[T], int], wait_header: Callable[[T], str | None], url: str
    ) -> T:
        """`send()` of a request to `url` through the pacer, if any (client/pacing.py)."""
        if self.pacer is None:
            return send()
        if not self.held:
            return self.pacer.at_once(send)
        return self.pacer.send(send, status, wait_header, origin_of(url))

    def seconds(self) -> float:
        """The deadline of a request starting now. It is `deadline`, cut at the end of the run's time budget."""
        left = None if self.pacer is None else self.pacer.left()
        return self.deadline if left is None else min(self.deadline, left)


class ResponseTooLarge(Exception):
    """A response body went past `Limits.max_response_size`, and reading stopped there."""

    def __init__(self, method: str, url: str, limit: int) -> None:
        super().__init__(f"the answer to {method} {url} is larger than {limit} bytes (--max-response-size)")
        self.method, self.url, self.limit = method, url, limit


class Exchange(threading.local):
    """The request this thread is sending. It holds its deadline, and what its connection has seen of it."""

    expires: float | None = None
    reused = False
    """It went out on a connection that had answered an earlier request."""
    heard = False
    """A byte of its answer came."""
    sending_at = 0.0
    """`time.monotonic()` when its first byte was written. client/together.py shows when each was sent."""
    heard_at = 0.0
    """`time.monotonic()` when the first byte of its answer came."""


exchange = Exchange()


@contextlib.contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Every socket operation of this thread inside the block shares one deadline, `seconds` from now."""
    exchange.expires = time.monotonic() + seconds
    try:
        yield
    finally:
        exchange.expires = None


def remaining(timeout: float | None) -> float | None:
    """`timeout` shortened to what is left of the thread's deadline. Raises TimeoutError once it has passed."""
    expires = exchange.expires
    if expires is None:
        return timeout
    left: float = expires - time.monotonic()
    if left <= 0:
        raise TimeoutError("the request's deadline passed")
    return left if timeout is None else min(timeout, left)


class Turns:
    """One connection's turns. Bytes written after an answer begin a new request on a reused connection."""

    def __init__(self) -> None:
        self._answered = False
        self._sending = False

    def sending(self) -> None:
        if not self._sending:
            self._sending = True
            exchange.reused, exchange.heard = self._answered, False
            exchange.sending_at = time.monotonic()

    def received(self, count: int) -> None:
        if count:
            if not exchange.heard:
                exchange.heard_at = time.monotonic()
            self._sending = False
            self._answered = exchange.heard = True


def again_if_dropped(send: Callable[[], T], dropped: tuple[type[Exception], ...]) -> T:
    """`send()`, and again while it raised `dropped` on a reused connection before any byte of an answer.

    A server may close a kept-alive connection while idle (RFC 9112, 9.6) just as a request goes out on
    it. Browsers and Schemathesis send such a request again. Connections that went idle together expire
    together, so the next pooled one may be dropped too. Each try takes the one it failed on out of the
    pool, so the tries end on a fresh connection at the latest. A fresh connection's failure, or one
    after the answer began, is the server's answer, so it is raised.
    """
    while True:
        exchange.reused = exchange.heard = False
        try:
            return send()
        except dropped:
            if not exchange.reused or exchange.heard:
                raise


def read_bounded(chunks: Iterable[bytes], limit: int, method: str, url: str) -> bytes:
    body = bytearray()
    for chunk in chunks:
        body += chunk
        if len(body) > limit:
            raise ResponseTooLarge(method, url, limit)
    return bytes(body)
