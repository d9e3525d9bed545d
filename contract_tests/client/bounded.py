"""Every request the suite makes is bounded in time and in size, whichever HTTP client sends it.

A target may trickle its headers or body one byte at a time, send an endless body, a huge one, or a
small gzip body that inflates to gigabytes. So each request gets a total deadline (connect, headers and
body together: every socket read waits at most what is left of it, not a fresh timeout per read) and its
body is read up to a maximum size, decompressed bytes counted, in small pieces. Each client meets these
rules in its own module: httpx (the domain tests) in `bounded_httpx`, requests (Schemathesis) in
`bounded_requests`; both raise `ResponseTooLarge` beyond the size, their usual timeout errors at the
deadline, ask for the same encodings (ACCEPT_ENCODING) and trust the same certificates (`trust`).

Both send a request once more on a fresh connection when a kept-alive one broke before any byte of the
answer came (the server closed it while idle, as HTTP/1.1 allows), never when a fresh one failed: each
connection's `Turns` tell the thread's `Exchange` which case it is.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TypeVar

from contract_tests.client.pacing import Pacer
from contract_tests.client.trust import Trust
from contract_tests.options import DEFAULT_DEADLINE, DEFAULT_MAX_RESPONSE_SIZE, Options

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
    pacer: Pacer | None = None
    """The run's gate on requests in flight and on the waits a target asks for (None: unpaced)."""

    @classmethod
    def of(cls, options: Options) -> Limits:
        trust = Trust(options.ca_bundle, options.insecure)
        return cls(options.request_timeout, options.max_response_size, trust, Pacer(options.workers or 1))

    def paced(self, send: Callable[[], T], status: Callable[[T], int], wait_header: Callable[[T], str | None]) -> T:
        """`send()` through the pacer, if any (client/pacing.py)."""
        return send() if self.pacer is None else self.pacer.send(send, status, wait_header)


class ResponseTooLarge(Exception):
    """A response body went past `Limits.max_response_size`; reading stopped there."""

    def __init__(self, method: str, url: str, limit: int) -> None:
        super().__init__(f"the answer to {method} {url} is larger than {limit} bytes (--max-response-size)")
        self.method, self.url, self.limit = method, url, limit


class Exchange(threading.local):
    """The request this thread is sending: its deadline, and what its connection has seen of it."""

    expires: float | None = None
    reused = False
    """It went out on a connection that had answered an earlier request."""
    heard = False
    """A byte of its answer came."""


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
    """`timeout` shortened to what is left of the thread's deadline; TimeoutError once it has passed."""
    expires = exchange.expires
    if expires is None:
        return timeout
    left: float = expires - time.monotonic()
    if left <= 0:
        raise TimeoutError("the request's deadline passed")
    return left if timeout is None else min(timeout, left)


class Turns:
    """One connection's turns: bytes written after an answer begin a new request on a reused connection."""

    def __init__(self) -> None:
        self._answered = False
        self._sending = False

    def sending(self) -> None:
        if not self._sending:
            self._sending = True
            exchange.reused, exchange.heard = self._answered, False

    def received(self, count: int) -> None:
        if count:
            self._sending = False
            self._answered = exchange.heard = True


def once_more_if_dropped(send: Callable[[], T], dropped: tuple[type[Exception], ...]) -> T:
    """`send()`, and once more if it raised `dropped` on a reused connection before any byte of an answer.

    A server may close a kept-alive connection while idle (RFC 9112, 9.6) just as a request goes out on
    it; browsers and Schemathesis send such a request again on a fresh connection. A fresh connection's
    failure, or one after the answer began, is the server's answer: it is raised.
    """
    exchange.reused = exchange.heard = False
    try:
        return send()
    except dropped:
        if not exchange.reused or exchange.heard:
            raise
    exchange.reused = exchange.heard = False
    return send()


def read_bounded(chunks: Iterable[bytes], limit: int, method: str, url: str) -> bytes:
    body = bytearray()
    for chunk in chunks:
        body += chunk
        if len(body) > limit:
            raise ResponseTooLarge(method, url, limit)
    return bytes(body)
