"""The canonical form of a case a run generates, for the digest of what each part of a run generated.

The digest is `outcome/generation.Generated`'s. Two runs of one seed give the same forms, whatever the
timing.

What legitimately differs from one run to the next is masked, and only that:

- Credentials. The values of the headers that carry them are masked, and their names kept. These
  headers are `Authorization`, `X-API-Key`, `Cookie`, and any header the surface sends as its
  credentials.
- Identifiers the run made (identities.py), in a raw body's text too. A run starts at a random point
  of the identity space. One counter, shared by every part, hands them out in the order the parts
  ask, and that order is the timing's.
- The target's origin, where a request follows a link the target built. A fresh target may listen on
  another port.

The contract's identifiers are the client's, and the suite sends back no identifier the target
assigned. So nothing else is masked.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any
from urllib.parse import urlsplit

from contract_tests.identities import Identities

CREDENTIAL_HEADERS = frozenset({"authorization", "x-api-key", "cookie", "proxy-authorization"})
CREDENTIAL = "<credential>"
FRESH = "<fresh>"
ORIGIN = "<origin>"


class Canonical:
    """A case as sorted JSON, with what differs between runs of one seed masked, as the module docstring says."""

    def __init__(self, identities: Identities, urls: Iterable[str] = (), credentials: Iterable[str] = ()) -> None:
        self._identities = identities
        self._credentials = CREDENTIAL_HEADERS | {name.lower() for name in credentials}
        parts = [urlsplit(url) for url in urls]
        self._origins = sorted({f"{p.scheme}://{p.netloc}" for p in parts if p.netloc}, key=len, reverse=True)
        self._made = re.compile(re.escape("~" + identities.mark) + r"\d+", re.IGNORECASE)
        self._numbers = re.compile(r"(?<![0-9])[0-9]{1,19}(?![0-9])")

    def __call__(self, form: Mapping[str, Any]) -> str:
        return json.dumps(self._masked(form), sort_keys=True, ensure_ascii=True)

    def headers(self, headers: Mapping[str, Any] | None) -> dict[str, Any] | None:
        """`headers` with the values of those carrying credentials masked."""
        if headers is None:
            return None
        return {
            str(name): CREDENTIAL if str(name).lower() in self._credentials else value
            for name, value in headers.items()
        }

    def _number(self, match: re.Match[str]) -> str:
        return FRESH if self._identities.issued(int(match.group())) else match.group()

    def _masked(self, value: Any) -> Any:
        if isinstance(value, Mapping):
            return {str(self._masked(key)): self._masked(item) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return [self._masked(item) for item in value]
        if isinstance(value, bytes):
            text = self._numbers.sub(self._number, value.decode("utf-8", "backslashreplace"))  # a made number
            return {"bytes": self._masked(text)}
        if value is None or isinstance(value, bool | float):
            return value
        if isinstance(value, int | str) and self._identities.issued(value):
            return FRESH
        if isinstance(value, int):
            return value
        if isinstance(value, Decimal):
            return f"decimal {value}"
        if isinstance(value, str):
            for origin in self._origins:
                value = value.replace(origin, ORIGIN)
            return self._made.sub(FRESH, value)
        return f"<{type(value).__name__}>"  # A file or a stream shows its type, since its repr may hold an address.
