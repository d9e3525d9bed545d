"""Schemathesis' requests session, bounded (`contract_tests.client.bounded`): urllib3 has no total deadline
of its own, so its connections read through a socket that waits at most what is left of it.

The same bounded pools serve direct requests and requests through a proxy (requests picks it from the
environment), and the answer is read right: a `Connection: close` body after its headers, interim 1xx
answers skipped. Private internals touched, here only: the socket's `_io_refs` and
`_decref_socketios` (a file made on a socket keeps it open until the file closes) and
`http.client.HTTPResponse._read_status` (http.client skips 100 Continue, no other 1xx).
"""

from __future__ import annotations

import functools
import http.client
import io
import socket
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

import requests
import urllib3
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import DecodeError, InsecureRequestWarning, ProtocolError, ReadTimeoutError

from contract_tests.client.bodies import declared_charset, text_codec
from contract_tests.client.bounded import (
    ACCEPT_ENCODING,
    READ_PIECE,
    Limits,
    Turns,
    again_if_dropped,
    deadline,
    read_bounded,
    remaining,
)
from contract_tests.client.keyring import Keyring


class _DeadlineSocket:
    """A socket whose every read and write waits at most what is left of the thread's deadline.

    It only stands in front of the real socket, which keeps its ownership. A file made on it counts on
    the real socket. So when http.client closes the connection while a response still reads its body
    (on `Connection: close`), the descriptor stays open until that response closes too.
    """

    def __init__(self, sock: Any) -> None:
        self._sock = sock
        self._timeout: float | None = sock.gettimeout()
        self._turns = Turns()

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

    def send(
        self,
        request: requests.PreparedRequest,
        stream: bool = False,
        timeout: Any = None,
        verify: bool | str = True,
        cert: Any = None,
        proxies: Mapping[str, str] | None = None,
    ) -> requests.Response:
        """requests' send, with `verify` from `Limits.trust` and the body always read here (`stream` is moot)."""
        kwargs = {"timeout": timeout, "verify": self.verify, "cert": cert, "proxies": proxies}
        request.headers.setdefault("Accept-Encoding", ACCEPT_ENCODING)
        sized(request)
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
        return self.limits.paced(
            functools.partial(self._send_once, request, **kwargs),
            lambda response: response.status_code,
            lambda response: response.headers.get("Retry-After"),
            request.url or "",
        )

    def _send_once(self, request: requests.PreparedRequest, **kwargs: Any) -> requests.Response:
        with deadline(self.limits.seconds()):  # the budget's end cuts it (client/pacing.py)
            send = functools.partial(super().send, request, stream=True, **kwargs)
            response = again_if_dropped(send, (requests.exceptions.ConnectionError,))
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
        charset = declared_charset(response.headers.get("content-type"))
        if charset is not None:  # Schemathesis decodes with it: a charset no codec reads is none (UTF-8 then)
            response.encoding = text_codec(charset)
        return response


def sized(request: requests.PreparedRequest) -> None:
    """Give a body whose length is known its `Content-Length`.

    requests leaves it out for a body that encodes to nothing, such as a form whose fields are all empty
    lists. Its adapter then sends the empty body chunked. An HTTP/1.0 server rightly answers that with
    411, a refusal the suite caused itself.
    """
    if "Content-Length" in request.headers or "Transfer-Encoding" in request.headers:
        return
    body = request.body.encode() if isinstance(request.body, str) else request.body
    if isinstance(body, bytes):
        request.headers["Content-Length"] = str(len(body))


EnvironmentMerge = Callable[[str, Any, Any, Any, Any], dict[str, Any]]


def environment_read_once(merge: EnvironmentMerge, session: requests.Session) -> EnvironmentMerge:
    """`session.merge_environment_settings`, reading the environment once per origin and settings.

    requests reads the proxies from the environment for every request (`get_environ_proxies` scans every
    variable twice, and the `no_proxy` rules). That is about 3 % of a run's CPU time on loopback. The
    answer depends only on the URL's scheme and host, the settings given, the session's own settings and
    the environment, which a run does not change."""
    answers: dict[str, dict[str, Any]] = {}

    def merged(url: str, proxies: Any, stream: Any, verify: Any, cert: Any) -> dict[str, Any]:
        own = (session.proxies, session.stream, session.verify, session.cert, session.trust_env)
        key = repr((urlsplit(url)[:2], proxies, stream, verify, cert, own))
        if key not in answers:
            answers[key] = merge(url, proxies, stream, verify, cert)
        answer = answers[key]
        return {**answer, "proxies": dict(answer["proxies"])}

    return merged


def bounded_session(
    session: requests.Session, limits: Limits, keyring: Keyring | None = None, expected: Mapping[str, str] = {}
) -> requests.Session:
    """`session` with every request going through a `BoundedAdapter` (mounted once), the environment read
    once per origin (`environment_read_once`)."""
    if not isinstance(session.get_adapter("http://"), BoundedAdapter):
        adapter = BoundedAdapter(limits, keyring, expected)
        session.mount("http://", adapter)
        session.mount("https://", adapter)
        read_once = environment_read_once(session.merge_environment_settings, session)
        session.merge_environment_settings = read_once  # type: ignore[method-assign,assignment]
    return session
