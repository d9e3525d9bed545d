"""The realm's remembered values as bytes, for a memory outside the process (`realm.shared`).

Users and clients are stored by name and found again in the realm file, which every replica reads. A
value naming one that this replica's file lacks reads as gone (None), as an expired one does. Secrets
stay digests. A browser's binding and SSO secret are stored as the digests the realm keeps.
"""

from __future__ import annotations

import json
from typing import Any

from mock_server.realm.logins import AuthorizationCode, AuthorizationRequest, PendingLogin, PendingLogout, Session
from mock_server.realm.realm_file import RealmConfig


def _dumps(value: dict[str, Any]) -> bytes:
    """Compact JSON bytes, by the standard library.

    The realm, and so `shop-mock`'s start, must import without the mock extra's orjson. Then it can say
    in one line what to install.
    """
    return json.dumps(value, separators=(",", ":")).encode()


class Text:
    def encode(self, value: str) -> bytes:
        return value.encode()

    def decode(self, data: bytes) -> str | None:
        return data.decode()


class Records:
    """The codecs of the records that name users and clients of `config`."""

    def __init__(self, config: RealmConfig) -> None:
        self.config = config

    def request(self, request: AuthorizationRequest) -> dict[str, Any]:
        return {**vars(request), "client": request.client.client_id}

    def checked_request(self, data: dict[str, Any]) -> AuthorizationRequest | None:
        client = self.config.clients.get(data["client"])
        return None if client is None else AuthorizationRequest(**{**data, "client": client})


class Sessions(Records):
    def encode(self, value: Session) -> bytes:
        browser = value.browser.hex() if value.browser is not None else None
        return _dumps({**vars(value), "user": value.user.username, "browser": browser})

    def decode(self, data: bytes) -> Session | None:
        fields = json.loads(data)
        user = self.config.users.get(fields["user"])
        if user is None:
            return None
        browser = bytes.fromhex(fields["browser"]) if fields["browser"] is not None else None
        return Session(**{**fields, "user": user, "browser": browser})


class Codes(Records):
    def encode(self, value: AuthorizationCode) -> bytes:
        return _dumps({**vars(value), "request": self.request(value.request)})

    def decode(self, data: bytes) -> AuthorizationCode | None:
        fields = json.loads(data)
        request = self.checked_request(fields["request"])
        return None if request is None else AuthorizationCode(**{**fields, "request": request})


class Logins(Records):
    def encode(self, value: PendingLogin) -> bytes:
        return _dumps({"request": self.request(value.request), "binding": value.binding.hex()})

    def decode(self, data: bytes) -> PendingLogin | None:
        fields = json.loads(data)
        request = self.checked_request(fields["request"])
        return None if request is None else PendingLogin(request, bytes.fromhex(fields["binding"]))


class Logouts:
    def encode(self, value: PendingLogout) -> bytes:
        return _dumps({**vars(value), "binding": value.binding.hex()})

    def decode(self, data: bytes) -> PendingLogout | None:
        fields = json.loads(data)
        return PendingLogout(**{**fields, "binding": bytes.fromhex(fields["binding"])})
