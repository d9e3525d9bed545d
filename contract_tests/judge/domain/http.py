"""The domain tests' HTTP side: calls by operation, and verdicts recorded with their evidence.

Every request goes through `Session.call`. So each verdict can show the exact request as a curl command,
credentials masked as Schemathesis masks them, and the response it got.

A session sends through the `Sender` it is given, the client layer's bounded httpx client wired in by
the run. The judging states what it needs of a client and imports none.
"""

from __future__ import annotations

import copy
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar
from urllib.parse import quote

import httpx

from contract_tests.client.bodies import lenient_json, undecodable
from contract_tests.client.bounded import Limits, ResponseTooLarge
from contract_tests.client.keyring import Keyring
from contract_tests.client.pacing import OVERLOADED, BudgetSpent
from contract_tests.client.surface import Surface
from contract_tests.judge.canonical import Canonical
from contract_tests.outcome.coverage import Sent
from contract_tests.outcome.findings import Ledger, Violation, describe_response
from contract_tests.outcome.generation import Generated
from contract_tests.schemathesis_seam import curl
from contract_tests.spec import JSON, Collection, Operation

MASKED = ("authorization", "x-api-key")
T = TypeVar("T")
DECODABLE = "response_decodable"
QUIET_HEADERS = ("accept", "accept-encoding", "connection", "user-agent", "content-length", "host")


class Sender(Protocol):
    """Requests built and sent within the run's limits (`client.bounded_httpx.BoundedHttpx`). `send` raises
    httpx's timeout at the deadline and ResponseTooLarge past the size limit."""

    limits: Limits

    def build_request(self, method: str, url: str, **kwargs: Any) -> httpx.Request: ...

    def send(self, request: httpx.Request) -> httpx.Response: ...

    def close(self) -> None: ...


class Unreachable(Exception):
    """The surface stopped answering in the middle of a domain test."""


class Abandoned(Exception):
    """A request got no answer to judge (too slow, too large). Its violation is recorded and the test stops."""


@dataclass(frozen=True)
class Exchange:
    request: httpx.Request
    response: httpx.Response

    @property
    def status(self) -> int:
        return self.response.status_code

    def json(self) -> Any:
        """The body's JSON, read leniently (client/bodies.py). None when it is none."""
        try:
            return lenient_json(self.response.content, self.response.headers.get("content-type"))
        except (ValueError, RecursionError):  # RecursionError means a body nested too deep to parse.
            return None

    def curl(self) -> str:
        headers = {
            name: "[Filtered]" if name.lower() in MASKED else value
            for name, value in self.request.headers.items()
            if name.lower() not in QUIET_HEADERS
        }
        body = _sent_body(self.request).decode("utf-8", "backslashreplace") or None
        generated = curl.generate(
            method=self.request.method,
            url=str(self.request.url),
            body=body,
            verify=True,
            headers=headers,
            known_generated_headers=None,
        )
        return generated.command

    def shown(self) -> str:
        return describe_response(self.status, self.response.headers.raw, self.response.content)


def _sent_body(request: httpx.Request) -> bytes:
    """The body sent. A streamed one (multipart) is read again from its stream."""
    try:
        return request.content
    except httpx.RequestNotRead:
        return request.read()


def _sent(
    op: Operation,
    query: dict[str, Any] | None,
    headers: dict[str, str] | None,
    content: dict[str, Any],
    request: httpx.Request,
) -> Sent:
    """What a call exercises: its parameters, top-level body fields and media type. A path parameter is
    always in the URL. Body fields are a JSON object's, form fields or files."""
    parameters = {f"path:{name}" for name in op.path_parameters}
    parameters |= {f"query:{name}" for name in query or {}}
    parameters |= {f"header:{name}" for name in headers or {}}
    fields = {
        str(name) for kind in ("json", "data", "files") if isinstance(content.get(kind), dict) for name in content[kind]
    }
    has_body = any(content.get(kind) is not None for kind in ("json", "data", "files", "content"))
    return Sent(frozenset(parameters), frozenset(fields), request.headers.get("content-type") if has_body else None)


class Session:
    """Calls on one surface, and the ledger its verdicts go to.

    Every request is bounded (`contract_tests.client.bounded`) and carries the keyring's current credentials.
    """

    def __init__(self, surface: Surface, ledger: Ledger, sender: Sender, keyring: Keyring | None = None) -> None:
        self.surface = surface
        self.ledger = ledger
        self.sender = sender
        self.limits = sender.limits
        self.keyring = keyring
        self._judged: weakref.WeakSet[httpx.Response] = weakref.WeakSet()
        """Responses a check judged already. Each counts once in the coverage."""
        self._owns_client = True
        self._undecodable: set[str] = set()
        """Operations with a `response_decodable` violation already. One is shown for each."""
        self._record: tuple[Generated, Canonical] | None = None
        """Where every call is recorded in canonical form, for the digest of what a part generated."""
        self._once: dict[str, Any] = {}
        """What was asked once of this surface's target (`once`), by name. Shared with the parts' copies."""
        self._once_lock = threading.Lock()

    def reporting_to(self, ledger: Ledger, record: tuple[Generated, Canonical] | None = None) -> Session:
        """A session on the same surface and connections, whose verdicts go to `ledger`. httpx's pool is
        thread-safe. The session is a part of the run done alongside others (run/scheduling.py). Its calls
        are recorded into `record`, the part's record and the canonical form. Closing it keeps the client."""
        other = copy.copy(self)
        other.ledger, other._judged, other._owns_client = ledger, weakref.WeakSet(), False
        other._record = record
        return other  # `_undecodable` stays shared, so one violation is shown per operation, whichever part saw it.

    def once(self, name: str, probe: Callable[[], T]) -> T:
        """What `probe` answers of this surface's target, asked once by `name` whatever the parts running
        alongside: those asking meanwhile wait for its answer. Its requests are not recorded."""
        with self._once_lock:
            if name not in self._once:
                self._once[name] = probe()
            answer: T = self._once[name]
            return answer

    def serves(self, *ops: Operation) -> bool:
        """Whether this surface serves every one of `ops`. A test needing one it does not serve is not run
        here, since the gateway serves a part of the API."""
        return all(op.id in self.surface.operations for op in ops)

    def close(self) -> None:
        if self._owns_client:
            self.sender.close()

    def url(self, op: Operation, params: dict[str, Any]) -> str:
        path = op.path
        for name, value in params.items():
            path = path.replace(f"{{{name}}}", quote(str(value), safe=""))
        return self.surface.url(path)

    def call(
        self,
        op: Operation,
        path_params: dict[str, Any] | None = None,
        *,
        query: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
        url: str | None = None,
        **content: Any,
    ) -> Exchange:
        """`op` at `path_params`. `headers` replace the surface's credentials, and `content` goes to httpx.

        Raises Abandoned (after recording a `response_time` or `response_size` violation) when the
        answer does not come whole within the deadline or the size limit, Unreachable when none comes.
        """
        sent = self.surface.headers if headers is None else headers
        if self.keyring is not None:
            sent = self.keyring.current(sent)
        request = self.sender.build_request(
            op.method.upper(), url or self.url(op, path_params or {}), params=query, headers=sent, **content
        )
        request.read()  # A multipart body streams. Read it once so that the reproduction can show it.
        exercised = _sent(op, query, headers, content, request)
        at = self._recorded(op, path_params, query, headers, url, content)
        try:
            response = self._send(op, request)
        except Abandoned:
            self.ledger.coverage.sent(self.surface.name, op.id, None, exercised)
            raise
        except BudgetSpent:
            self._unsent(at, "not sent: the time budget was spent")
            raise
        if response.status_code in OVERLOADED:
            self._unsent(at, f"answered {response.status_code} after every retry (judged as answered)")
        self.ledger.coverage.sent(self.surface.name, op.id, response.status_code, exercised)
        own = self.surface.headers
        if self.keyring is not None and self.keyring.answered(request.headers, response.status_code, own):
            request.headers.update(self.keyring.current(own))
            response = self._send(op, request)
            self.keyring.answered(request.headers, response.status_code, own)
        exchange = Exchange(request, response)
        self._decodable(op, exchange)
        return exchange

    def heard(self, op: Operation, exchange: Exchange, query: dict[str, Any] | None, content: dict[str, Any]) -> None:
        """An exchange sent with others at once (client/together.py), counted as `call` counts one. It goes in
        the coverage, and its body is judged `response_decodable`."""
        exercised = _sent(op, query, None, content, exchange.request)
        self.ledger.coverage.sent(self.surface.name, op.id, exchange.status, exercised)
        self._decodable(op, exchange)

    def _recorded(
        self,
        op: Operation,
        path_params: dict[str, Any] | None,
        query: dict[str, Any] | None,
        headers: dict[str, str] | None,
        url: str | None,
        content: dict[str, Any],
    ) -> int | None:
        """Record a call about to be sent, as the test asked for it. Answer its position in the part's calls."""
        if self._record is None:
            return None
        generated, canonical = self._record
        form = {
            "operation": op.id,
            "path": path_params,
            "query": query,
            "headers": canonical.headers(headers),
            "url": url,
            "content": content,
        }
        return generated.add("calls", canonical(form))

    def _unsent(self, at: int | None, why: str) -> None:
        if self._record is not None and at is not None:
            self._record[0].unsent("calls", at, why)

    def _decodable(self, op: Operation, exchange: Exchange) -> None:
        """Every answer's body is judged `response_decodable`, whichever domain test asked for it."""
        if not exchange.response.content:
            return
        problem = undecodable(exchange.response.content, exchange.response.headers.get("content-type"))
        if problem is None:
            self.ledger.passed(self.surface.name, op.id, DECODABLE)
        elif op.id not in self._undecodable:
            self._undecodable.add(op.id)
            violation = Violation(DECODABLE, self.surface.name, op.id, problem, exchange.curl(), exchange.shown())
            self.ledger.violated(violation)

    def _send(self, op: Operation, request: httpx.Request) -> httpx.Response:
        started = time.monotonic()
        try:
            return self.sender.send(request)
        except httpx.TimeoutException as exc:
            within = f"within {self.limits.deadline:g} s"
            rule = f"an answer comes whole {within} (connect, headers and body; --request-timeout)"
            self._abandon("response_time", op, request, rule)
            raise Abandoned(f"{request.method} {request.url}: no whole answer {within}") from exc
        except ResponseTooLarge as exc:
            rule = f"an answer is at most {exc.limit} bytes, decompressed (--max-response-size)"
            self._abandon("response_size", op, request, rule)
            raise Abandoned(str(exc)) from exc
        except httpx.HTTPError as exc:
            raise Unreachable(f"{request.method} {request.url}: {exc or type(exc).__name__}") from exc
        finally:
            self.ledger.run.spent(self.surface.name, op.id, time.monotonic() - started)

    def _abandon(self, check: str, op: Operation, request: httpx.Request, rule: str) -> None:
        exchange = Exchange(request, httpx.Response(0, request=request))
        shown = "(no whole answer: reading stopped at the limit)"
        self.ledger.violated(Violation(check, self.surface.name, op.id, rule, exchange.curl(), shown))

    def create_for(self, check: str, op: Operation, collection: Collection, body: JSON, what: str) -> Exchange | None:
        """Create the item `check` works on at `op`. When the target refuses it, the answer is None and the
        check is listed as not exercised there. `what` names the item, such as "the item to patch"."""
        created = self.call(collection.create, json=body)
        if created.status == 201:
            return created
        self.ledger.skipped(self.surface.name, op.id, check, f"{what} could not be created (HTTP {created.status})")
        return None

    def judge(
        self, check: str, op: Operation, exchange: Exchange, broken: str | None, setup: Sequence[Exchange] = ()
    ) -> bool:
        """Record a pass, or the violation `broken` describes. True when the rule held.

        `setup` is the requests that made the state `exchange` depends on, for a self-contained reproduction.
        """
        if exchange.response not in self._judged:
            self._judged.add(exchange.response)
            self.ledger.coverage.judged(self.surface.name, op.id)
        if broken is None:
            self.ledger.passed(self.surface.name, op.id, check)
            return True
        steps = tuple(step.curl() for step in setup if step is not exchange)
        violation = Violation(check, self.surface.name, op.id, broken, exchange.curl(), exchange.shown(), steps)
        self.ledger.violated(violation)
        return False
