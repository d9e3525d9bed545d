"""The mock's own API under /__mock__/, outside the contract. It serves health, reset, state, the request
journal, faults, violations in proxy mode, sessions, and the consumer contract the journal's traffic
makes (`contract`).

`store` is the scoped store of `mock_sessions.scope`. So health, reset and state are those of the
session the request names (X-Mock-Session), else the default state's.

This module does no authentication itself. The mock binds to loopback by default, and
`admin_guard.AdminGuard` stands in front of the admin API. The API is kept apart from mocked traffic,
as WireMock keeps /__admin, in one explicit table of routes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response

from mock_server.control.contract import Recorder, name_problem, summary
from mock_server.control.faults.memory import FaultRules
from mock_server.control.faults.rules import parse_rules
from mock_server.control.journal.base import Journal
from mock_server.control.mock_sessions.registry import Sessions, requested
from mock_server.control.violations.memory import Violations
from mock_server.spec.errors import BadRequest, problem_body
from mock_server.spec.inputs import decode_strictly, load_json
from mock_server.spec.quoting import quote
from mock_server.spec.schemas import Schema, load_spec
from mock_server.state.fixtures import FixtureError, checked_dataset
from mock_server.state.store import COLLECTIONS, Store

PREFIX = "/__mock__"
Endpoint = Callable[[Request], Any]


def problem(status: int, detail: str) -> JSONResponse:
    return JSONResponse(problem_body(status, detail), status_code=status, media_type="application/problem+json")


class Admin:
    # Seven parameters because: the admin API reads and resets each store app.py opened, one by one.
    def __init__(
        self,
        store: Store,
        journal: Journal,
        faults: FaultRules,
        violations: Violations,
        sessions: Sessions,
        spec: Schema | None = None,
        per_replica: tuple[str, ...] = (),
    ) -> None:
        self.store = store
        self.per_replica = per_replica  # What this replica keeps to itself, as health says.
        self.sessions = sessions
        self.journal = journal
        self.faults = faults
        self.violations = violations
        self.spec = spec  # The served spec, which an imported state is checked against. None is the bundled one.

    def routes(self) -> list[tuple[str, str, Endpoint]]:
        """(method, path, endpoint) of the whole admin API."""
        return [
            ("GET", f"{PREFIX}/health", self.health),
            ("POST", f"{PREFIX}/reset", self.reset),
            ("GET", f"{PREFIX}/state", self.get_state),
            ("PUT", f"{PREFIX}/state", self.put_state),
            ("GET", f"{PREFIX}/requests", self.requests),
            ("GET", f"{PREFIX}/requests/count", self.count_requests),
            ("DELETE", f"{PREFIX}/requests", self.clear_requests),
            ("GET", f"{PREFIX}/contract", self.contract),
            ("GET", f"{PREFIX}/faults", self.get_faults),
            ("PUT", f"{PREFIX}/faults", self.put_faults),
            ("DELETE", f"{PREFIX}/faults", self.clear_faults),
            ("GET", f"{PREFIX}/violations", self.get_violations),
            ("DELETE", f"{PREFIX}/violations", self.clear_violations),
            ("GET", f"{PREFIX}/sessions", self.list_sessions),
            ("DELETE", f"{PREFIX}/sessions/{{name}}", self.delete_session),
            ("POST", f"{PREFIX}/sessions/{{name}}/reset", self.reset_session),
        ]

    async def health(self, request: Request) -> Response:
        """The state's counts, the replica answering (the journal's `replica`) and what it keeps to itself."""
        counts = {name: self.store.count(name) for name in COLLECTIONS}
        about = {"replica": self.journal.replica, "per_replica": list(self.per_replica)}
        return JSONResponse({"status": "ok", "counts": counts, **about})

    async def reset(self, request: Request) -> Response:
        """Back to the data set loaded at start."""
        self.store.reset()
        return Response(status_code=204)

    async def get_state(self, request: Request) -> Response:
        return JSONResponse(self.store.export())

    async def put_state(self, request: Request) -> Response:
        """Replace the whole state. It is validated like fixtures, so a bad import changes nothing."""
        try:
            text = decode_strictly(await request.body(), "(body)", "state")
            self.store.replace_all(checked_dataset(load_json(text, what="state"), "state", self.spec))
        except BadRequest as error:
            return problem(400, error.detail)
        except (ValueError, FixtureError) as error:
            return problem(400, str(error))
        return Response(status_code=204)

    async def requests(self, request: Request) -> Response:
        """The journal, oldest first, filtered as `Journal.query` says. `?limit=N` keeps the last N."""
        try:
            entries = self.journal.query(request.query_params)
        except ValueError as error:
            return problem(400, str(error))
        return JSONResponse([self.journal.as_json(entry) for entry in entries])

    async def count_requests(self, request: Request) -> Response:
        """How many journal entries match the filters, to ask "was this called N times"."""
        try:
            return JSONResponse({"count": len(self.journal.query(request.query_params))})
        except ValueError as error:
            return problem(400, str(error))

    async def clear_requests(self, request: Request) -> Response:
        self.journal.clear()
        return Response(status_code=204)

    async def contract(self, request: Request) -> Response:
        """The consumer contract of the journal's traffic, made by control/contract.py.

        It is the contract of the session the request names (X-Mock-Session), else of the traffic that
        named none. `?name=` names the consumer, by default `consumer`. `?format=text` is the readable
        summary.
        """
        unknown = set(request.query_params) - {"name", "format"}
        if unknown:
            return problem(400, f"unknown parameter(s): {', '.join(quote(name) for name in sorted(unknown))}")
        shown = request.query_params.get("format", "json")
        if shown not in ("json", "text"):
            return problem(400, f"format must be json or text, not {quote(shown)}")
        name = request.query_params.get("name", "consumer")
        if wrong := name_problem(name):
            return problem(400, f"name {wrong}")
        session = next(iter(requested(request.scope["headers"])), "")
        entries = self.journal.query({"session": session})
        full = len(self.journal.entries()) >= (self.journal.rows.maxlen or 0)
        document = Recorder(self.journal, self.spec or load_spec()).document(name, entries, full)
        if shown == "text":
            return PlainTextResponse(summary(document) + "\n")
        return JSONResponse(document)

    async def get_faults(self, request: Request) -> Response:
        return JSONResponse([rule.as_json() for rule in self.faults.listed()])

    async def put_faults(self, request: Request) -> Response:
        """Replace the whole rule list. It is checked whole, so a bad list changes nothing."""
        try:
            text = decode_strictly(await request.body(), "(body)", "fault list")
            self.faults.replace(parse_rules(load_json(text, what="fault list"), self.faults.index))
        except BadRequest as error:
            return problem(400, error.detail)
        except ValueError as error:  # A RuleError, or a body that is not JSON.
            return problem(400, f"Fault rules not installed: {error}")
        return Response(status_code=204)

    async def clear_faults(self, request: Request) -> Response:
        self.faults.replace([])
        return Response(status_code=204)

    async def get_violations(self, request: Request) -> Response:
        """What the proxied backend's traffic broke of the spec. It is empty when not proxying."""
        return JSONResponse(self.violations.as_json())

    async def clear_violations(self, request: Request) -> Response:
        self.violations.clear()
        return Response(status_code=204)

    async def list_sessions(self, request: Request) -> Response:
        """The live sessions, each with its name, created, last used and size. The size is the items it holds itself."""
        return JSONResponse([session.as_json() for session in self.sessions.sessions()])

    async def delete_session(self, request: Request) -> Response:
        name = request.path_params["name"]
        if not self.sessions.remove(name):
            return problem(404, f"No session {quote(name)}.")
        return Response(status_code=204)

    async def reset_session(self, request: Request) -> Response:
        """Back to the seed. The session stays, unlike with DELETE, after which a next request would recreate it."""
        name = request.path_params["name"]
        session = self.sessions.find(name)
        if session is None:
            return problem(404, f"No session {quote(name)}.")
        session.store.reset()
        return Response(status_code=204)
