"""The request journal, for verification: what was asked, what was answered, what was injected.

Memory is bounded: a ring buffer of `Settings.journal_size` entries (200 by default), each body kept
to its first `BODY_LIMIT` bytes. Recording stays cheap on the hot path: an entry keeps references to
the raw header lists and the body's first bytes; masking credentials, decoding bodies and naming the
operation happen when the journal is read, not when a request is served. Credentials never show:
`mock_server.http.masking` is the one rule, applied to the query, the headers and the bodies.
"""

from __future__ import annotations

import datetime
import itertools
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from starlette.types import Scope

from mock_server.api.security import REALM_PATH
from mock_server.control.mock_sessions.registry import requested
from mock_server.http import masking
from mock_server.spec.operations import OperationIndex
from mock_server.spec.quoting import quote

BODY_LIMIT = 4096  # bytes of each request and response body kept in an entry
FAULT = "mock.fault"  # the scope key where `faults.middleware.Faults` notes the fault it applied to a request
VIOLATIONS = "mock.violations"  # the scope key where `proxy.Proxy` notes a request's spec violations
RawHeaders = list[tuple[bytes, bytes]]
NO_HEADERS: RawHeaders = []  # shared, never changed


@dataclass(slots=True)
class Entry:
    """One exchange as recorded: raw values, turned into JSON only when the journal is read."""

    id: int
    at: float  # seconds since the epoch, when the answer was done
    method: str
    path: str
    query: bytes
    status: int | None  # None: the connection was dropped before any answer
    duration: float  # seconds
    request_headers: RawHeaders
    response_headers: RawHeaders
    request_body: bytes
    response_body: bytes
    fault: dict[str, Any] | None
    violations: list[str] | None
    replica: str = ""  # the replica that served it, where not this one (a shared journal's entries)


class Journal:
    """The base of both journals: each exchange kept in a ring, read back as JSON and by filters.

    The ring is this process's journal (`memory.MemoryJournal`), or this replica's batch on its way to
    Redis (`redis.RedisJournal`). Either way `record` is the same few steps on the hot path."""

    def __init__(self, size: int, index: OperationIndex, replica: str = "") -> None:
        self.replica = replica  # this process's name, shown with each exchange it served
        # an exchange is kept as a plain tuple of `Entry`'s fields (a third of the cost of an `Entry`
        # on the hot path) and made an `Entry` when the journal is read
        self.rows: deque[tuple[Any, ...]] = deque(maxlen=size)
        self.index = index
        self._ids = itertools.count(1)
        # called with each row as it is kept (the dashboard's live stream); while none is, recording
        # costs one test of an empty list
        self.subscribers: list[Callable[[tuple[Any, ...]], None]] = []

    # Eight parameters because: the columns of one exchange, kept as a tuple on the hot path (no object).
    def record(
        self,
        scope: Scope,
        started: float,
        status: int | None,
        response_headers: RawHeaders = NO_HEADERS,
        request_body: bytes = b"",
        response_body: bytes = b"",
        fault: dict[str, Any] | None = None,
        violations: list[str] | None = None,
    ) -> None:
        """Keep one exchange; `started` is its `time.perf_counter()` when it arrived."""
        self.rows.append(
            (
                next(self._ids),
                time.time(),
                scope["method"],
                as_sent(scope),
                scope["query_string"],
                status,
                time.perf_counter() - started,
                scope["headers"],
                response_headers,
                request_body,
                response_body,
                fault,
                violations,
            )
        )
        if self.subscribers:
            for subscriber in self.subscribers:
                subscriber(self.rows[-1])

    def entries(self) -> list[Entry]:
        """The exchanges kept, oldest first."""
        raise NotImplementedError

    def clear(self) -> None:
        raise NotImplementedError

    def follow(self, subscriber: Callable[[tuple[Any, ...]], None]) -> None:
        """Call `subscriber` with each row from now on (the dashboard's stream)."""
        raise NotImplementedError

    def unfollow(self, subscriber: Callable[[tuple[Any, ...]], None]) -> None:
        raise NotImplementedError

    def query(self, params: Mapping[str, str]) -> list[Entry]:
        """Entries matching every filter given, oldest first; ValueError names a filter that is wrong.

        Filters: method, path (exact, without the query), operationId, status (`404` or a class `4xx`),
        session (the X-Mock-Session or mock_session cookie it named; empty: none), since / until (epoch
        seconds or ISO 8601), limit (the last N of the matches).
        """
        unknown = set(params) - {"method", "path", "operationId", "status", "session", "since", "until", "limit"}
        if unknown:
            raise ValueError(f"unknown filter(s): {', '.join(quote(name) for name in sorted(unknown))}")
        tests: list[Callable[[Entry], bool]] = []
        if "method" in params:
            method = params["method"].upper()
            tests.append(lambda e: e.method == method)
        if "path" in params:
            path = params["path"]
            tests.append(lambda e: path in (e.path, unquote(e.path)))  # as sent, or with escapes decoded
        if "operationId" in params:
            operation_id = params["operationId"]
            if operation_id not in self.index.ids():
                raise ValueError(f"operationId {quote(operation_id)} is not an operation of the spec")
            tests.append(lambda e: self.operation_id(e) == operation_id)
        if "status" in params:
            tests.append(_status_test(params["status"]))
        if "session" in params:
            session = params["session"] or None
            tests.append(lambda e: session_of(e) == session)
        if "since" in params:
            since = _moment("since", params["since"])
            tests.append(lambda e: e.at - e.duration >= since)
        if "until" in params:
            until = _moment("until", params["until"])
            tests.append(lambda e: e.at - e.duration <= until)
        found = [entry for entry in self.entries() if all(test(entry) for test in tests)]
        if "limit" in params:
            limit = params["limit"]
            if not (limit.isascii() and limit.isdecimal()):
                raise ValueError(f"limit must be a whole number, not {quote(limit)}")
            digits = limit.lstrip("0")  # counted before conversion: more than the matches' count has means all
            kept = int(digits or "0") if len(digits) <= len(str(len(found))) else len(found)
            found = found[-kept:] if kept else []
        return found

    def operation_id(self, entry: Entry) -> str | None:
        operation = self.index.find(entry.method, entry.path)
        return operation.operation_id if operation else None

    def as_json(self, entry: Entry) -> dict[str, Any]:
        arrived = entry.at - entry.duration
        return {
            "id": entry.id,
            "time": datetime.datetime.fromtimestamp(arrived, datetime.UTC).isoformat(timespec="milliseconds"),
            "at": arrived,
            "session": session_of(entry),
            "method": entry.method,
            "path": entry.path,
            "query": masking.form(entry.query.decode("latin-1")),
            "operationId": self.operation_id(entry),
            "status": entry.status,
            "duration_ms": round(entry.duration * 1000, 3),
            "request": {
                "headers": masking.headers(entry.request_headers),
                **body_json(entry.request_body, entry.path, entry.request_headers, request=True),
            },
            "response": {
                "headers": masking.headers(entry.response_headers),
                **body_json(entry.response_body, entry.path, entry.response_headers, request=False),
            },
            "fault": entry.fault,
            "violations": entry.violations or [],
            "replica": entry.replica or self.replica,
        }


def as_sent(scope: Scope) -> str:
    """The path as the client sent it (`raw_path`: an escaped `/` in an identifier stays `%2F`), so
    that the entry names its operation, and a copied request asks for the same resource."""
    raw: bytes | None = scope.get("raw_path")
    return raw.decode("latin-1") if raw else str(scope["path"])


def session_of(entry: Entry) -> str | None:
    """The session the request named, read from its headers only now: recording costs nothing more."""
    return next(iter(requested(entry.request_headers)), None)


def body_json(body: bytes, path: str, headers: RawHeaders, request: bool) -> dict[str, Any]:
    """The body as text, credentials masked (`masking.body`): the realm's fields, anyone's password."""
    text = body[:BODY_LIMIT].decode("utf-8", "replace")
    content_type = next((value.decode("latin-1") for name, value in headers if name.lower() == b"content-type"), "")
    shown = masking.body(text, content_type, path.startswith(REALM_PATH), request)
    return {"body": shown, "truncated": len(body) > BODY_LIMIT}


def _status_test(text: str) -> Callable[[Entry], bool]:
    if text.isascii() and text.isdecimal() and len(text) == 3:  # a status has three digits: int() reads them
        return lambda e: e.status == int(text)
    if len(text) == 3 and text[0] in "12345" and text[1:].lower() == "xx":
        return lambda e: e.status is not None and e.status // 100 == int(text[0])
    raise ValueError(f"status must be a status such as 404 or a class such as 4xx, not {quote(text)}")


def _moment(name: str, text: str) -> float:
    try:
        return float(text)
    except ValueError:
        pass
    try:
        moment = datetime.datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{name} must be epoch seconds or an ISO 8601 time, not {quote(text)}") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.UTC)
    return moment.timestamp()
