"""The scheme and host a client called, as a reverse proxy reports them in X-Forwarded-Proto and -Host.

Absolute URLs the mock hands out, such as page links and the realm's issuer, must name what the
client called, not the mock's own address. The first value of a header counts, as in Starlette's
`Headers`. So does the first entry of a comma-separated list, from the proxy nearest the client.
"""

from __future__ import annotations

from starlette.datastructures import URL
from starlette.types import Scope


def public_origin(scope: Scope) -> str:
    """`scheme://host` of the request in `scope`, honouring a proxy's forwarded headers."""
    headers: dict[bytes, bytes] = {}
    for name, value in scope["headers"]:
        headers.setdefault(name.lower(), value)
    host = (headers.get(b"x-forwarded-host") or headers.get(b"host") or b"").decode("latin-1")
    host = host or URL(scope=scope).netloc
    scheme = headers.get(b"x-forwarded-proto", b"").decode("latin-1") or scope["scheme"]
    return f"{_first(scheme)}://{_first(host)}"


def _first(value: str) -> str:
    return value.split(",")[0].strip()
