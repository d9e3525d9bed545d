"""The request journal, for verification: what was asked, what was answered, what was injected.

Memory is bounded. The journal is a ring buffer of `Settings.journal_size` entries (200 by default),
and each body is kept to its first `BODY_LIMIT` bytes.

Recording stays cheap on the hot path. An entry keeps references to the raw header lists and the
body's first bytes. Masking credentials, decoding bodies and naming the operation happen when the
journal is read, not when a request is served.

Credentials never show. `mock_server.http.masking` is the one rule, applied to the query, the headers
and the bodies.
"""

from __future__ import annotations

import datetime
import itertools
import math
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

BODY_LIMIT = 4096  # The bytes of each request and response body kept in an entry.
FAULT = "mock.fault"  # The scope key where `faults.middleware.Faults` notes the fault it applied to a request.
VIOLATIONS = "mock.violations"  # The scope key where `proxy.Proxy` notes a request's spec violations.
RawHeaders = list[tuple[bytes, bytes]]
NO_HEADERS: RawHeaders = []  # Shared, so never changed.


@dataclass(slots=True)
class Entry:
    """One exchange as recorded, in raw values that become JSON only when the journal is read."""

    id: int
    at: float  # Seconds since the epoch, when the answer was done.
    method: str
    path: str
    query: bytes
    status: int | None  # None when the connection was dropped before any answer.
    duration: float  # In seconds.
    request_headers: RawHeaders
    response_headers: RawHeaders
    request_body: bytes
    response_body: bytes
    fault: dict[str, Any] | None
    violations: list[str] | None
    replica: str = ""  # The replica that served it, where not this one, as in a shared journal's entries.


class Journal:
    """The base of both journals. Each exchange is kept in a ring, and read back as JSON and by filters.

    The ring is this process's journal (`memory.MemoryJournal`), or this replica's batch on its way to
    Redis (`redis.RedisJournal`). Either way `record` is the same few steps on the hot path."""

    def __init__(self, size: int, index: OperationIndex, replica: str = "") -> None:
        self.replica = replica  # This process's name, shown with each exchange it served.
        # An exchange is kept as a plain tuple of `Entry`'s fields, because that costs a third of an
        # `Entry` on the hot path. It is made an `Entry` when the journal is read.
        self.rows: deque[tuple[Any, ...]] = deque(maxlen=size)
        self.index = index
        self._ids = itertools.count(1)
        # Each is called with each row as it is kept, for the dashboard's live stream. While there is
        # none, recording costs one test of an empty list.
        self.subscribers: list[Callable[[tuple[Any, ...]], None]] = []

    # Eight parameters because: they are the columns of one exchange, kept as a tuple (no object) on the hot path.
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
        """Keep one exchange. `started` is its `time.perf_counter()` when it arrived."""
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
        """Call `subscriber` with each row from now on, for the dashboard's stream."""
        raise NotImplementedError

    def unfollow(self, subscriber: Callable[[tuple[Any, ...]], None]) -> None:
        raise NotImplementedError

    def query(self, params: Mapping[str, str]) -> list[Entry]:
        """Entries matching every filter given, oldest first. A ValueError names a filter that is wrong.

        The filters are:

        - method;
        - path, exact and without the query;
        - operationId;
        - status, as `404` or a class such as `4xx`;
        - session, the X-Mock-Session or mock_session cookie it named, where empty means none;
        - since and until, in epoch seconds or ISO 8601;
        - limit, the last N of the matches.
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
            tests.append(lambda e: path in (e.path, unquote(e.path)))  # As sent, or with escapes decoded.
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
            digits = limit.lstrip("0")  # Counted before conversion. More digits than the matches' count has means all.
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
    """The path as the client sent it, so that the entry names its operation.

    In `raw_path`, an escaped `/` in an identifier stays `%2F`. So a copied request asks for the same
    resource."""
    raw: bytes | None = scope.get("raw_path")
    return raw.decode("latin-1") if raw else str(scope["path"])


def session_of(entry: Entry) -> str | None:
    """The session the request named. It is read from its headers only now, so recording costs nothing more."""
    return next(iter(requested(entry.request_headers)), None)


def body_json(body: bytes, path: str, headers: RawHeaders, request: bool) -> dict[str, Any]:
    """The body as text, with credentials masked (`masking.body`): the realm's fields and anyone's password."""
    text = body[:BODY_LIMIT].decode("utf-8", "replace")
    content_type = next((value.decode("latin-1") for name, value in headers if name.lower() == b"content-type"), "")
    shown = masking.body(text, content_type, path.startswith(REALM_PATH), request)
    return {"body": shown, "truncated": len(body) > BODY_LIMIT}


def _status_test(text: str) -> Callable[[Entry], bool]:
    if text.isascii() and text.isdecimal() and len(text) == 3:  # A status has three digits, which int() reads.
        return lambda e: e.status == int(text)
    if len(text) == 3 and text[0] in "12345" and text[1:].lower() == "xx":
        return lambda e: e.status is not None and e.status // 100 == int(text[0])
    raise ValueError(f"status must be a status such as 404 or a class such as 4xx, not {quote(text)}")


def _moment(name: str, text: str) -> float:
    try:
        seconds = float(text)
    except ValueError:
        pass
    else:
        if math.isfinite(seconds):  # `nan` matched nothing, and `inf` everything or nothing, in silence.
            return seconds
        raise ValueError(f"{name} must be epoch seconds or an ISO 8601 time, not {quote(text)}")
    try:
        moment = datetime.datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{name} must be epoch seconds or an ISO 8601 time, not {quote(text)}") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.UTC)
    return moment.timestamp()
