"""How a request's session reaches the handlers. It is a context variable, read by the store they hold.

Handlers, the fast path and the admin API were each built once, over one store. Rather than build
them again per session, they are all given a `ScopedStore`. Each call goes to the store of the request
being served, else to the default state. That store is `CURRENT`. The `SessionScope` middleware sets
it for the request's task, or `Steering` sets it to a scratch copy for a steered write. A request
without a session pays a look in `header_names`, finding no X-Mock-Session and no cookie. It then
pays one context variable read per store call.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextvars import ContextVar

from starlette.types import ASGIApp, Receive, Scope, Send

from mock_server.control.mock_sessions.registry import HEADER, SessionError, Sessions, session_name
from mock_server.http.header_names import header_names
from mock_server.http.middleware import send_problem
from mock_server.state.store import Dataset, Key, Record, StateUnavailable, Store

CURRENT: ContextVar[Store | None] = ContextVar("mock_session_store", default=None)
SESSION_HEADERS = frozenset({HEADER.lower().encode(), b"cookie"})  # Where a request may name its session.
UNSCOPED = "/__mock__/sessions"  # The sessions' own admin routes name sessions in their paths.


class ScopedStore:
    """A `Store` that is the current request's session's, else `default`."""

    def __init__(self, default: Store) -> None:
        self.default = default

    def _store(self) -> Store:
        return CURRENT.get() or self.default

    def count(self, collection: str) -> int:
        return self._store().count(collection)

    def page(self, collection: str, offset: int, limit: int) -> list[Record]:
        return self._store().page(collection, offset, limit)

    def counted_page(self, collection: str, offset: int, limit: int) -> tuple[int, list[Record]]:
        return self._store().counted_page(collection, offset, limit)

    def get(self, collection: str, key: Key) -> Record:
        return self._store().get(collection, key)

    def owned(self, collection: str, field: str, owner: Key, offset: int, limit: int) -> tuple[int, list[Record]]:
        return self._store().owned(collection, field, owner, offset, limit)

    def create(self, collection: str, record: Record) -> Record:
        return self._store().create(collection, record)

    def update(self, collection: str, key: Key, changes: Record) -> Record:
        return self._store().update(collection, key, changes)

    def delete(self, collection: str, key: Key) -> None:
        self._store().delete(collection, key)

    def replace_all(self, dataset: Dataset) -> None:
        self._store().replace_all(dataset)

    def reset(self) -> None:
        self._store().reset()

    def export(self) -> dict[str, list[Record]]:
        return self._store().export()

    def inconsistencies(self) -> Iterator[str]:
        return self._store().inconsistencies()


class SessionScope:
    """ASGI middleware that makes the request's session, named by header or cookie, current for its handling."""

    def __init__(self, app: ASGIApp, registry: Sessions) -> None:
        self.app = app
        self.registry = registry

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope["path"].startswith(UNSCOPED)
            or SESSION_HEADERS.isdisjoint(header_names(scope))
        ):
            await self.app(scope, receive, send)
            return
        try:
            name = session_name(scope["headers"])
            if name is None:
                await self.app(scope, receive, send)
                return
            store = self.registry.store(name)
        except SessionError as error:
            await send_problem(send, error.status, error.detail)
            return
        except StateUnavailable as error:  # The sessions live in a shared state that did not answer.
            await send_problem(send, 503, str(error))
            return
        token = CURRENT.set(store)
        try:
            await self.app(scope, receive, send)
        finally:
            CURRENT.reset(token)
