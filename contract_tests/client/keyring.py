"""Credentials for the whole run, kept valid: the API key and the bearer token the suite sends.

A token from a realm (`--token-url`) is renewed before it expires, at its `expires_in` less a margin.
It is also renewed once after an unexpected 401. A token whose `exp` had passed when it was fetched
says that the realm's clock and this machine's disagree. Its `expires_in` alone is trusted then.
Without one the run stops (exit 2): renewing would fetch a token for every request. A static
`--token` whose `exp` passes cannot be renewed, so the run stops (`CredentialsLost`, exit 2).

Both HTTP clients take the current credentials from here and report each answer to them. So a stretch
of refusals of credentials accepted at the start ends the run with exit 2, never a pass. The keyring
also knows every secret the suite sends, so that what the suite prints can mask them.

It fetches a token through the function it is given, which `client.target` wires to
`client.auth.fetch_token` under the run's limits. It imports no HTTP client, so that every client and
session can hold it.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import jwt

MARGIN_SHARE = 0.2
"""Renew when this share of the token's lifetime is left. The margin is at most MAX_MARGIN seconds."""
MAX_MARGIN = 30.0
REFUSALS_IN_A_ROW = 3
"""This many answers 401 in a row to the suite's own credentials, after a renewal, end the run."""
MIN_AGE_TO_RENEW = 1.0
"""A token younger than this is not renewed after a 401. The refusal is then the target's, not the token's."""


class CredentialsError(Exception):
    """Credentials could not be obtained, or the target refused them."""


class CredentialsLost(Exception):
    """Credentials valid at the start are no longer. They expired beyond renewal, or were refused again and again."""


@dataclass(frozen=True)
class Realm:
    token_url: str
    client_id: str
    client_secret: str


Fetch = Callable[[Realm], tuple[str, float | None]]
"""A client_credentials grant at a realm. It answers the token and its `expires_in`, or raises CredentialsError."""


def _expiry(token: str) -> float | None:
    try:
        exp = jwt.decode(token, options={"verify_signature": False}).get("exp")
    except jwt.PyJWTError:
        return None
    return float(exp) if isinstance(exp, int | float) and math.isfinite(exp) else None


def _utc(timestamp: float) -> str:
    """`timestamp` as a reader takes it, also where it is past what a date can show (a token's `exp` is the token's)."""
    try:
        return datetime.fromtimestamp(timestamp, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    except (OverflowError, ValueError, OSError):
        return f"the Unix time {timestamp:.0f}"


class Keyring:
    """The credentials of a run, renewed when due. It is thread-safe because Schemathesis may use workers."""

    def __init__(self, api_key: str | None, token: str | None, realm: Realm | None, fetch: Fetch) -> None:
        self.api_key = api_key
        self.realm = realm
        self.fetch = fetch
        self.refused = 0
        """Requests refused (401) although they carried the suite's current credentials."""
        self._lock = threading.Lock()
        self._issued: list[str] = []
        self._token: str | None = None
        self._expires: float | None = None
        self._margin = 0.0
        self._fetched_at = 0.0
        self._in_a_row = 0
        if realm is not None:
            self._fetch()
        elif token is not None:
            self._use(token, _expiry(token))

    def _use(self, token: str, expires: float | None) -> None:
        self._token, self._expires = token, expires
        self._issued.append(token)
        self._fetched_at = time.time()
        lifetime = expires - time.time() if expires is not None else 0.0
        self._margin = min(MAX_MARGIN, max(lifetime, 0.0) * MARGIN_SHARE)

    def _fetch(self) -> None:
        assert self.realm is not None
        try:
            token, expires_in = self.fetch(self.realm)
        except CredentialsError as exc:
            raise CredentialsLost(str(exc)) from exc
        fetched = time.time()
        exp = _expiry(token)
        if exp is not None and exp <= fetched:  # The realm's clock and this machine's disagree.
            if not expires_in:
                raise CredentialsLost(
                    f"the realm's token expired at {_utc(exp)}, before this machine fetched it at "
                    f"{_utc(fetched)}, and the realm gave no expires_in: its clock or this machine's is off"
                )
            # The relative `expires_in` alone says when to renew: by `exp`, every request would renew.
            exp = None
        # The earlier of `expires_in` and the token's own `exp`. The `exp` is in whole seconds, so it may be up to a
        # second earlier.
        candidates = [t for t in (exp, fetched + expires_in if expires_in else None) if t is not None]
        self._use(token, min(candidates, default=None))

    @property
    def token(self) -> str | None:
        """The bearer token to send now, renewed first when due. CredentialsLost when it expired for good."""
        with self._lock:
            if self._expires is not None and time.time() >= self._expires - self._margin:
                if self.realm is not None:
                    self._fetch()
                elif time.time() >= self._expires:
                    # A static token is taken once, when the run starts.
                    when = "before the run" if self._expires <= self._fetched_at else "during the run"
                    raise CredentialsLost(
                        f"the token given with --token expired at {_utc(self._expires)}, {when}; "
                        "give --token-url, --client-id and --client-secret so that the suite can renew it"
                    )
            return self._token

    def secrets(self) -> tuple[str, ...]:
        """Every secret the suite sends or holds, for masking."""
        client_secret = (self.realm.client_secret,) if self.realm is not None else ()
        api_key = (self.api_key,) if self.api_key else ()
        return (*api_key, *client_secret, *self._issued)

    def current(self, headers: Mapping[str, Any]) -> dict[str, Any]:
        """`headers` with a bearer token the suite was given replaced by the current one."""
        current = dict(headers)
        for name, value in headers.items():
            if name.lower() == "authorization" and str(value).removeprefix("Bearer ") in self._issued:
                current[name] = f"Bearer {self.token}"
        return current

    def _renewed_since(self, sent: Mapping[str, Any], wanted: Mapping[str, Any]) -> bool:
        """Whether `sent` carried a token of the suite's that was renewed since. A 401 to it says nothing of
        the current one, so it is no refusal of the suite's credentials."""
        for name, value in wanted.items():
            was = sent.get(name)
            if name.lower() == "authorization" and was != value and str(was).removeprefix("Bearer ") in self._issued:
                return True
        return False

    def answered(self, sent: Mapping[str, Any], status: int, expected: Mapping[str, str]) -> bool:
        """Note an answer to a request that carried `sent`. True when the request is worth sending again.

        Only requests carrying the surface's own current credentials (`expected`) count. A 401 to those
        renews the token once. REFUSALS_IN_A_ROW of them raise CredentialsLost.
        """
        wanted = self.current(expected)
        if status == 401 and self._renewed_since(sent, wanted):
            return True  # Another thread renewed the token while this request was out, so send it again.
        if not wanted or any(sent.get(name) != value for name, value in wanted.items()):
            return False
        if status != 401:
            self._in_a_row = 0
            return False
        with self._lock:
            self.refused += 1
            self._in_a_row += 1
            if self._in_a_row >= REFUSALS_IN_A_ROW:
                raise CredentialsLost(
                    f"the target refused the suite's credentials ({', '.join(wanted)}) for {self._in_a_row} "
                    f"requests in a row (HTTP 401), though it accepted them at the start"
                )
            if self.realm is None or time.time() - self._fetched_at < MIN_AGE_TO_RENEW:
                return False
            self._fetch()
            return True
