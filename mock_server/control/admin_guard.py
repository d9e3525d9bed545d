"""Who may use the admin API (/__mock__/): the developer's own tools, not any web page or network peer.

The admin API exports, replaces and resets the whole state, so `AdminGuard` stands in front of it.

- With `--no-admin` the admin API is off altogether. It answers 404, as if it did not exist.
- With a token, a request without `Authorization: Bearer <token>` is 401. The token comes from
  `--admin-token`, or is generated at start when the mock binds to a non-loopback address. A GET of
  one of the `shell` paths needs no token, because a browser cannot send the header on a navigation.
  Those are the dashboard's static files, which hold no data. The page then asks for the token and
  sends it on each call.
- A refusal of a browser opening the dashboard's page (`Accept: text/html`) says why as plain text.
  Any other refusal is problem+json.
- A `Host` is admitted when it names `localhost`, `127.0.0.1`, `[::1]`, the bound address or the
  address the connection came in on, on any port. The port may differ because a port mapping such
  as `-p 9000:8000`, or a proxy that keeps the client's `Host`, changes it. A name given with
  `--allowed-host`, such as a proxy's or an ingress's, is admitted too. Any other `Host` is 403, so
  that a DNS name rebound to 127.0.0.1 cannot reach the admin API from a page. Such a page's `Host`
  is its own name, never an address literal.
- A request from a browser page of another origin is 403. Its `Origin` must name the very `Host` the
  request was sent to, over http or https, since a TLS proxy in front changes the scheme the mock
  sees. CORS never applies here, so a page can neither read an answer nor send a "simple" POST that
  resets the state.

The `Origin` header of an admitted request is dropped, so that the CORS layer adds nothing.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable
from http import HTTPStatus

from starlette.types import ASGIApp, Receive, Scope, Send

from mock_server.http.hosts import bracketed, same_origin, split_host
from mock_server.http.middleware import send_problem, send_whole

PREFIX = "/__mock__"
LOCAL_NAMES = ("localhost", "127.0.0.1", "::1")
TOKEN_SCHEME = "Bearer"


async def refuse_as_text(send: Send, status: int, detail: str, headers: Iterable[tuple[str, str]] = ()) -> None:
    """Refuse in plain text, so that the dashboard's page opened in a tab shows the reason.

    Firefox shows an `application/problem+json` error as a network error, not its detail."""
    body = f"{status} {HTTPStatus(status).phrase}: {detail}\n".encode()
    await send_whole(send, status, body, "text/plain; charset=utf-8", [("x-content-type-options", "nosniff"), *headers])


class AdminGuard:
    """ASGI middleware in front of /__mock__/ (see the module docstring)."""

    def __init__(
        self,
        app: ASGIApp,
        enabled: bool,
        token: str | None,
        bound_host: str,
        shell: frozenset[str] = frozenset(),
        allowed_hosts: Iterable[str] = (),
    ) -> None:
        self.app = app
        self.shell = shell
        self.enabled = enabled
        self.token = token.encode() if token else None
        bound = [] if bound_host in ("0.0.0.0", "::", "") else [bound_host]
        self.names = frozenset(bracketed(name.lower()) for name in (*LOCAL_NAMES, *bound))
        allowed = [split_host(host) for host in allowed_hosts]
        self.allowed = frozenset(host for host in allowed if host is not None)  # (name, port); a port "" is any port.

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path: str = scope.get("path", "")
        if scope["type"] != "http" or not (path == PREFIX or path.startswith(PREFIX + "/")):
            await self.app(scope, receive, send)
            return
        if not self.enabled:
            await send_problem(send, 404, "The admin API is off (--no-admin).")
            return
        headers: dict[bytes, bytes] = {}
        for name, value in scope["headers"]:
            headers.setdefault(name.lower(), value)
        shell = scope["method"] in ("GET", "HEAD") and path in self.shell
        refuse = refuse_as_text if shell and b"text/html" in headers.get(b"accept", b"") else send_problem
        host = headers.get(b"host", b"").decode("latin-1").lower()
        if not self.admits(host, scope):
            await refuse(send, 403, "The admin API answers only on the mock's own address (Host header).")
            return
        origin = headers.get(b"origin")
        if origin is not None and not same_origin(origin.decode("latin-1").lower(), host):
            await refuse(send, 403, "The admin API does not answer requests from web pages of other origins.")
            return
        if self.token is not None and not shell and not self._authorized(headers.get(b"authorization", b"")):
            challenge = [("www-authenticate", f'{TOKEN_SCHEME} realm="shop-mock-admin"')]
            await send_problem(send, 401, "The admin API needs its token: Authorization: Bearer <token>.", challenge)
            return
        scope = {**scope, "headers": [(n, v) for n, v in scope["headers"] if n.lower() != b"origin"]}
        await self.app(scope, receive, send)

    def admits(self, host: str, scope: Scope) -> bool:
        """Whether the Host header `host` names this mock.

        It does when it names a loopback literal, the bound address or the one the connection came in
        on, on any port, or when it is an allowed host."""
        parts = split_host(host)
        if parts is None:
            return False
        name = parts[0]
        server = scope.get("server") or ("", 0)
        arrived_at = bracketed(str(server[0] or "").lower())
        return name in self.names or name == arrived_at or (name, "") in self.allowed or parts in self.allowed

    def _authorized(self, header: bytes) -> bool:
        scheme, _, credential = header.partition(b" ")
        assert self.token is not None
        return scheme.lower() == TOKEN_SCHEME.lower().encode() and secrets.compare_digest(
            credential.strip(), self.token
        )
