"""The domain tests' httpx client, bounded as `contract_tests.client.bounded` says.

Its connections come from an httpcore network backend whose every read and write waits at most what
is left of the deadline. The client is httpx's own transport, direct or through the environment's
proxies, with that backend.

It touches private internals, here only. httpx's `HTTPTransport._pool` and httpcore's
`ConnectionPool._network_backend` are set because httpx has no parameter for the backend.
`httpx._utils.get_environment_proxies` is read because httpx drops the environment's proxies once given
a transport.
"""

from __future__ import annotations

import functools
from typing import Any

import httpcore
import httpx
from httpx._utils import URLPattern, get_environment_proxies

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


class _DeadlineStream(httpcore.NetworkStream):
    def __init__(self, stream: httpcore.NetworkStream) -> None:
        self._stream = stream
        self._turns = Turns()

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
    """httpx's own transport, direct or through `proxy`, with its connections on the deadline backend."""
    transport = httpx.HTTPTransport(verify=verify, proxy=proxy, trust_env=False)
    transport._pool._network_backend = _DeadlineBackend()
    return transport


def httpx_client(limits: Limits) -> httpx.Client:
    """A client whose requests, sent with `send_httpx`, end by the deadline and the size limit.

    The environment's proxies are mounted as httpx would mount them, each with the same bounds. httpx
    itself ignores them once given a transport. Every client of one trust shares its TLS context
    (`Trust.ssl_context`).
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


def proxied(url: str) -> bool:
    """Whether a proxy from the environment carries requests to `url`, as `httpx_client` mounts them: the
    most specific pattern matching it decides (a `NO_PROXY` entry maps to no proxy)."""
    patterns = sorted(((URLPattern(p), proxy) for p, proxy in get_environment_proxies().items()), key=lambda m: m[0])
    return next((proxy is not None for pattern, proxy in patterns if pattern.matches(httpx.URL(url))), False)


def send_httpx(client: httpx.Client, request: httpx.Request, limits: Limits) -> httpx.Response:
    """Send `request` within the deadline, paced. The answer comes with its body read, at most the size limit."""
    request.read()  # A streamed body could not be sent a second time.
    return limits.paced(
        functools.partial(_send_httpx, client, request, limits),
        lambda response: response.status_code,
        lambda response: response.headers.get("Retry-After"),
        str(request.url),
    )


def _send_httpx(client: httpx.Client, request: httpx.Request, limits: Limits) -> httpx.Response:
    with deadline(limits.seconds()):  # The budget's end cuts it (client/pacing.py).
        send = functools.partial(client.send, request, stream=True)
        response = again_if_dropped(send, (httpx.NetworkError, httpx.RemoteProtocolError))
        try:
            body = read_bounded(response.iter_bytes(), limits.max_response_size, request.method, str(request.url))
        finally:
            response.close()
    # The body is decoded already, so the copy keeps every header but the encoding and is not decoded twice.
    # Headers are copied as the bytes they came as. Their text is httpx's guess, which may not encode back.
    headers = [(k, v) for k, v in response.headers.raw if k.lower() != b"content-encoding"]
    return httpx.Response(response.status_code, headers=headers, content=body, request=request)


class BoundedHttpx:
    """A client and the limits it sends under, as one. A domain test's session sends through it."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.client = httpx_client(limits)

    def build_request(self, method: str, url: str, **kwargs: Any) -> httpx.Request:
        return self.client.build_request(method, url, **kwargs)

    def send(self, request: httpx.Request) -> httpx.Response:
        return send_httpx(self.client, request, self.limits)

    def close(self) -> None:
        self.client.close()
