"""A URL someone names on a command line (a target, a token endpoint, an issuer, a proxy's backend).

It is checked before it is used, since urllib meets "http://[::1" or a port ":abc" as a traceback, and
an error line that echoes `user:password@` shows a password."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

QUERY_PASSWORD = re.compile(r"([?&]password=)[^&#]*", re.IGNORECASE)


def url_problem(url: str, query: bool = False) -> str | None:
    """Why `url` is no absolute http(s) URL with a host, a port from 1 to 65535 if any, and no credentials,
    fragment, space or control character (and no query, unless `query`), or None. It says the value only
    where that is safe."""
    if any(char.isspace() or not char.isprintable() for char in url):
        return "must not hold a space or a control character"  # Not echoed: it may be what ends a line.
    try:
        parts = urlsplit(url)
        port = parts.port  # A port that is not a number from 0 to 65535 raises ValueError, as does "[::1".
    except ValueError as error:
        return f"is not a URL ({error}): {url!r}"
    if parts.username is not None:  # Not echoed: it holds a password.
        return "must not hold credentials (user:password@)"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return f"must be an absolute http(s) URL, got {url!r}"
    if port == 0:
        return f"must name a port from 1 to 65535, got {url!r}"
    if parts.fragment or (parts.query and not query):
        return f"must not hold {'a fragment' if query else 'a query or a fragment'}, got {url!r}"
    import httpx  # Only now: pytest imports the suite's options, so this module, in every run of any project.

    try:
        httpx.URL(url)  # The clients' own rules for a host (IDNA, IPv4), which urllib does not check.
    except httpx.InvalidURL as error:
        return f"is not a URL ({error}): {url!r}"
    return None


def shown(url: str) -> str:
    """`url` as a banner, a log or an error line may show it: the password of its credentials masked
    (`redis://user:***@host/0`; all of `redis://***@host`, which may be a password alone) and so a
    `password` in its query (`unix:///run/redis.sock?password=***`), since a state's URL comes with
    its secret from the environment of a deployment."""
    scheme, separator, rest = url.partition("://")
    if not separator:
        return url
    end = min((at for at in (rest.find(char) for char in "/?#") if at >= 0), default=len(rest))
    authority, tail = rest[:end], rest[end:]
    userinfo, at_sign, host = authority.rpartition("@")
    if at_sign:
        user, colon, _ = userinfo.partition(":")
        authority = f"{user}:***@{host}" if colon and "@" not in user else f"***@{host}"
    return f"{scheme}://{authority}" + QUERY_PASSWORD.sub(r"\1***", tail)
