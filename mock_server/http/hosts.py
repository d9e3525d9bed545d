"""The `Host` and `Origin` headers read as the admin guard and the command line need them.

It is a module of its own, importing nothing of the web stack. So `--allowed-host` is checked by the
same rule the guard applies, since mock_server/arguments.py must import without the `mock` extra.
"""

from __future__ import annotations

import re

# A Host header is a name, an IPv4 address or an IPv6 address in brackets, then an optional port.
HOST = re.compile(r"(?P<name>\[[0-9a-f:.]+\]|[a-z0-9_.-]+)(?::(?P<port>[0-9]{1,5}))?")
ORIGIN = re.compile(r"https?://(?P<authority>[^/?#]+)")
# An origin as written on a command line: a scheme, an authority without credentials, at most a "/".
WRITTEN_ORIGIN = re.compile(r"(?P<scheme>[a-z][a-z0-9+.-]*)://(?P<authority>[^/?#@]+)/?")
DEFAULT_PORTS = {"http": "80", "https": "443"}


def bracketed(name: str) -> str:
    """An IPv6 address as a Host header writes it."""
    return f"[{name}]" if ":" in name and not name.startswith("[") else name


def split_host(value: str) -> tuple[str, str] | None:
    """The (name, port) of a Host header value, or None when it is not one. The port is "" when absent."""
    match = HOST.fullmatch(value.lower())
    return None if match is None else (match["name"].rstrip("."), match["port"] or "")


def same_origin(origin: str, host: str) -> bool:
    """Whether a page's `Origin` is the one the request's `Host` names, with a default port written or not."""
    match = ORIGIN.fullmatch(origin)
    if match is None:  # It is "null", or no web origin at all.
        return False
    scheme = origin.partition(":")[0]
    default = DEFAULT_PORTS[scheme]
    return _with_port(match["authority"], default) in (_with_port(host, "80"), _with_port(host, "443"))


def serialized_origin(text: str) -> str | None:
    """`text` as a browser's `Origin` header writes it, or None when it names no origin.

    CORS compares origins as text, so an allowed origin written `http://LOCALHOST:80/` matched no browser,
    which sends `http://localhost`, and every page was refused with no word why. The scheme and host
    are lowercased, a default port is dropped, and one trailing "/" too; a path, query or user is no
    origin. "null" is what a page from a file sends."""
    if text == "null":
        return text
    match = WRITTEN_ORIGIN.fullmatch(text.lower())
    parts = None if match is None else split_host(match["authority"])
    if match is None or parts is None or not parts[0]:
        return None
    scheme, (name, written) = match["scheme"], parts
    port = int(written) if written else None
    if port is not None and not 0 < port <= 65535:
        return None
    if port is None or str(port) == DEFAULT_PORTS.get(scheme):
        return f"{scheme}://{name}"
    return f"{scheme}://{name}:{port}"


def _with_port(authority: str, default: str) -> str:
    parts = split_host(authority)
    return "" if parts is None else f"{parts[0]}:{parts[1] or default}"
