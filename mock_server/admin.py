"""The mock's own API under /__mock__/, outside the contract: health, reset, state, request journal.

No authentication: the mock binds to loopback by default. Kept apart from mocked traffic, as
WireMock keeps /__admin, in one explicit table of routes.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from mock_server.errors import problem_body
from mock_server.fixtures import FixtureError, checked_dataset
from mock_server.middleware import JournalEntry
from mock_server.store import COLLECTIONS, Store

PREFIX = "/__mock__"
Endpoint = Callable[[Request], Any]


def problem(status: int, detail: str) -> JSONResponse:
    return JSONResponse(problem_body(status, detail), status_code=status, media_type="application/problem+json")


class Admin:
    def __init__(self, store: Store, journal: deque[JournalEntry]) -> None:
        self.store = store
        self.journal = journal

    def routes(self) -> list[tuple[str, str, Endpoint]]:
        """(method, path, endpoint): the whole admin API."""
        return [
            ("GET", f"{PREFIX}/health", self.health),
            ("POST", f"{PREFIX}/reset", self.reset),
            ("GET", f"{PREFIX}/state", self.get_state),
            ("PUT", f"{PREFIX}/state", self.put_state),
            ("GET", f"{PREFIX}/requests", self.requests),
        ]

    async def health(self, request: Request) -> Response:
        counts = {name: self.store.count(name) for name in COLLECTIONS}
        return JSONResponse({"status": "ok", "counts": counts})

    async def reset(self, request: Request) -> Response:
        """Back to the data set loaded at start."""
        self.store.reset()
        return Response(status_code=204)

    async def get_state(self, request: Request) -> Response:
        return JSONResponse(self.store.export())

    async def put_state(self, request: Request) -> Response:
        """Replace the whole state; validated like fixtures, so a bad import changes nothing."""
        try:
            self.store.replace_all(checked_dataset(json.loads(await request.body()), source="state"))
        except (ValueError, FixtureError) as error:
            return problem(400, str(error))
        return Response(status_code=204)

    async def requests(self, request: Request) -> Response:
        """The last requests, newest last; `?limit=N` keeps the last N."""
        entries = list(self.journal)
        limit = request.query_params.get("limit", "")
        if limit.isdigit():
            entries = entries[-int(limit) :] if int(limit) else []
        return JSONResponse([asdict(entry) for entry in entries])
