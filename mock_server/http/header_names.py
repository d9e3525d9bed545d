"""The names of a request's headers, found in one pass and kept in the scope.

Several layers act only on a request that carries a given header. Faults and Steering act on
`Prefer`, SessionScope on `X-Mock-Session` or a cookie, and CORS on `Origin`. Each asks
`header_names` first and does nothing more when its header is absent. So the common request pays
one pass over its headers for all of them, not one pass (or a Starlette `Headers`) per layer.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any

KEY = "mock.header_names"  # The scope key of (the header list the names were taken from, the names).


def header_names(scope: MutableMapping[str, Any]) -> frozenset[bytes]:
    """The lower-case names of the request's headers.

    They are kept with the header list they came from. So a layer that hands on a copy of the scope
    with other headers, such as AdminGuard or BodyLimit, gets them counted again, never stale names.
    """
    headers = scope["headers"]
    kept = scope.get(KEY)
    if kept is not None and kept[0] is headers:
        names: frozenset[bytes] = kept[1]
        return names
    names = frozenset([name.lower() for name, _ in headers])
    scope[KEY] = (headers, names)
    return names
