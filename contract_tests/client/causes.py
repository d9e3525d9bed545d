"""Why a part of a run could not complete, in words a user acts on, from the exception types alone.

The domain tests send with httpx (over httpcore), and Schemathesis with requests (over urllib3 and
http.client). Both wrap the socket's and ssl's own errors. A failure is a chain: `__cause__`,
`__context__`, urllib3's `MaxRetryError.reason` and the exceptions requests and urllib3 keep in their
`args`.

`classify` looks at every exception of the chain and answers the first cause of `CAUSES` any of them
is. So the innermost fact wins over its wrappers: a reset under urllib3's "Connection aborted." is a
reset. No message text is ever matched.
"""

from __future__ import annotations

import http.client
import socket
import ssl
from collections.abc import Iterator

import httpcore
import httpx
import requests
import urllib3.exceptions

from contract_tests.client.bounded import ResponseTooLarge
from contract_tests.schemathesis_seam import ServerUnavailable

CAUSES: tuple[tuple[str, tuple[type[BaseException], ...]], ...] = (
    ("response too large", (ResponseTooLarge,)),
    ("TLS", (ssl.SSLError, requests.exceptions.SSLError, urllib3.exceptions.SSLError)),
    (
        "timeout",
        (
            TimeoutError,
            httpx.TimeoutException,
            httpcore.TimeoutException,
            requests.Timeout,
            urllib3.exceptions.ReadTimeoutError,  # Not its base, since urllib3's NewConnectionError (refused) is one.
        ),
    ),
    ("name resolution", (socket.gaierror, urllib3.exceptions.NameResolutionError)),
    ("connection refused", (ConnectionRefusedError,)),
    ("connection closed without an answer", (http.client.RemoteDisconnected,)),
    ("connection reset", (ConnectionResetError, ConnectionAbortedError, BrokenPipeError)),
    (
        "protocol error",
        (
            httpx.ProtocolError,
            httpx.DecodingError,
            httpcore.ProtocolError,
            http.client.HTTPException,
            urllib3.exceptions.ProtocolError,
            urllib3.exceptions.DecodeError,
            requests.exceptions.ChunkedEncodingError,
            requests.exceptions.ContentDecodingError,
        ),
    ),
    ("server stopped answering", (ServerUnavailable,)),
    ("connection error", (httpx.TransportError, httpcore.NetworkError, requests.ConnectionError, OSError)),
)
"""Cause classes, most specific first."""

UNREACHABLE = frozenset({"connection refused", "name resolution", "server stopped answering"})
"""Causes that say the whole surface is gone, not one exchange."""


def chain(error: BaseException) -> Iterator[BaseException]:
    """`error` and every exception it wraps, each once, outermost first."""
    seen: set[int] = set()
    pending = [error]
    while pending:
        current = pending.pop(0)
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        reason = getattr(current, "reason", None) if isinstance(current, urllib3.exceptions.MaxRetryError) else None
        inner = [current.__cause__, current.__context__, reason, *current.args]
        pending += [item for item in inner if isinstance(item, BaseException)]


def classify(error: BaseException) -> str:
    """The cause class of `error`. For anything that is not the network, it is "other (<its type>)"."""
    found = list(chain(error))
    for cause, kinds in CAUSES:
        if any(isinstance(item, kinds) for item in found):
            return cause
    return f"other ({type(error).__name__})"


def request_of(error: BaseException) -> str:
    """`METHOD URL` of the first request the chain names, or "" if none. httpx and requests errors carry it."""
    for item in chain(error):
        request: object = None
        if isinstance(item, httpx.RequestError):
            try:
                request = item.request
            except RuntimeError:  # httpx raises when the error was made without its request.
                request = None
        elif isinstance(item, requests.RequestException):
            request = item.request
        method, url = getattr(request, "method", None), getattr(request, "url", None)
        if method and url:
            return f"{method} {url}"
    return ""
