"""Latency and faults, as WireMock injects them: `Prefer: delay=MS`, and rules at /__mock__/faults.

Both apply to the API's operations only: on the admin API and the realm, `Prefer` is ignored and no
rule matches. A rule matches requests of the API by any of `method`, `path`
(a spec path template), `operationId`, `surface` ("backend" or "gateway") and `session` (the
request's X-Mock-Session or mock_session cookie, mock_server.control.sessions.registry), and applies one `fault`:

- `delay`: wait `delay_ms`, or a lognormal time of median `median_ms` and shape `sigma`, then serve;
- `status`: answer `status` (an error status) with its problem body, without serving;
- `drop`: close the connection before any answer, without serving;
- `empty`: serve, then answer the status and headers with an empty body;
- `cut`: serve, then send half the body and close the connection;
- `lost`: serve (a write is committed), then close the connection without an answer.

Any rule may also carry a delay. `probability` (default 1) and `count` (the next N matches; default
every one) limit it. The first matching rule applies. Every applied fault is noted in the journal.

A delay is `asyncio.sleep`: it holds no lock and no worker, other requests go on meanwhile. With no
rules, a request without `Prefer` costs one empty-list check and a look in `header_names`.
Closing a connection needs the server's transport: under uvicorn (the only server the mock runs on)
it is the `transport` of the `send` callable uvicorn hands to the app, which `MockApp` notes in the
scope (`note_connection`: Connexion's error middleware wraps `send` before any middleware of ours).
The note is a weak reference: uvicorn's per-request object holds the scope, so a strong one made a
reference cycle of every request, left to the garbage collector (a tenth of a POST's time).
"""

from __future__ import annotations

import asyncio
import math
import random
import re
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mock_server.control.journal.memory import FAULT, Journal
from mock_server.control.prefer import MAX_DELAY_MS, PreferenceError, preferences, sent
from mock_server.control.sessions.registry import NAME, NAME_RULE, requested
from mock_server.http.middleware import send_problem
from mock_server.spec.operations import METHODS, Operation, OperationIndex, describe
from mock_server.spec.quoting import quote
from mock_server.state.store import StateUnavailable

CONNECTION = "mock.connection"  # the scope key of a weak reference to the server's per-request object
KINDS = ("delay", "status", "drop", "empty", "cut", "lost")
FIELDS = {
    "method",
    "path",
    "operationId",
    "surface",
    "session",
    "fault",
    "delay_ms",
    "median_ms",
    "sigma",
    "status",
    "probability",
    "count",
}


class RuleError(ValueError):
    """A rule list that cannot be installed; the message names the rule and what is wrong."""


@dataclass
class Rule:
    fault: str
    method: str | None = None
    path: str | None = None
    operationId: str | None = None  # the name the admin API and the spec use
    surface: str | None = None
    session: str | None = None
    delay_ms: float | None = None
    median_ms: float | None = None
    sigma: float | None = None
    status: int | None = None
    probability: float = 1.0
    count: int | None = None  # how many more times it applies; None: every time

    def as_json(self) -> dict[str, Any]:
        return {name: value for name, value in vars(self).items() if value is not None}

    def delay(self, draw: Callable[[float, float], float]) -> float:
        """Seconds to wait: fixed, drawn from the lognormal, or none."""
        if self.delay_ms is not None:
            return self.delay_ms / 1000
        if self.median_ms is not None and self.sigma is not None:
            return min(draw(math.log(self.median_ms), self.sigma), MAX_DELAY_MS) / 1000
        return 0.0


def parse_rules(data: Any, index: OperationIndex) -> list[Rule]:
    """The rule list of a PUT, checked whole: RuleError names the first rule and field that is wrong."""
    if not isinstance(data, list):
        raise RuleError("the body must be a JSON array of rules")
    return [_parse_rule(item, f"rule {number}", index) for number, item in enumerate(data)]


def _parse_rule(item: Any, where: str, index: OperationIndex) -> Rule:
    if not isinstance(item, dict):
        raise RuleError(f"{where}: must be an object")
    unknown = set(item) - FIELDS
    if unknown:
        raise RuleError(f"{where}: unknown field(s) {describe(sorted(unknown))} (known: {describe(sorted(FIELDS))})")
    if item.get("fault") not in KINDS:
        raise RuleError(f"{where}: fault must be one of {describe(KINDS)}, not {quote(item.get('fault'))}")
    choices = {
        "method": {method.upper() for method in METHODS},
        "path": index.templates(),
        "operationId": index.ids(),
        "surface": index.surfaces(),
    }
    for name, allowed in choices.items():
        if name in item and item[name] not in allowed:
            raise RuleError(f"{where}: {name} {quote(item[name])} is not one of {describe(sorted(allowed))}")
    if "session" in item and not (isinstance(item["session"], str) and NAME.fullmatch(item["session"])):
        raise RuleError(f"{where}: session {quote(item['session'])} is not a session name ({NAME_RULE})")
    for name, low, high in (
        ("delay_ms", 0, MAX_DELAY_MS),
        ("median_ms", 0, MAX_DELAY_MS),
        ("sigma", 0, 10),
        ("probability", 0, 1),
    ):
        if name in item and not (_number(item[name]) and low <= item[name] <= high):
            raise RuleError(f"{where}: {name} must be a number from {low} to {high}, not {quote(item[name])}")
    if item.get("median_ms") == 0:
        raise RuleError(f"{where}: median_ms must be above 0 (a lognormal delay has no zero median)")
    if ("median_ms" in item) != ("sigma" in item):
        raise RuleError(f"{where}: a lognormal delay needs both median_ms and sigma")
    if "delay_ms" in item and "median_ms" in item:
        raise RuleError(f"{where}: give delay_ms (fixed) or median_ms and sigma (lognormal), not both")
    if item["fault"] == "delay" and "delay_ms" not in item and "median_ms" not in item:
        raise RuleError(f"{where}: a delay fault needs delay_ms, or median_ms and sigma")
    if item["fault"] == "status":
        if not (isinstance(item.get("status"), int) and 400 <= item["status"] <= 599):
            raise RuleError(
                f"{where}: a status fault needs status, an error status 400-599, not {quote(item.get('status'))}"
            )
    elif "status" in item:
        raise RuleError(f"{where}: status is only for a status fault")
    if "count" in item and not (
        isinstance(item["count"], int) and not isinstance(item["count"], bool) and item["count"] > 0
    ):
        raise RuleError(f"{where}: count must be a positive whole number, not {quote(item['count'])}")
    return Rule(**item)


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


class FaultRules:
    """The installed rules, and the choice of the one (if any) a request meets; this process's own
    (a shared state's replicas share theirs: `faults_redis.RedisFaultRules`)."""

    def __init__(self, index: OperationIndex, rng: random.Random | None = None) -> None:
        self.index = index
        self.rules: list[Rule] = []
        self.rng = rng or random.Random()
        self._screened: list[Rule] = []  # the rules `_screen` was made for
        self._screen: list[tuple[str, re.Pattern[str]]] = []

    def passes(self, scope: Scope) -> bool:
        """Whether no rule can meet this request, which names no session (`bypass.Bypass` takes only
        those): checked against the method and path pattern of each operation some rule names, so that
        a rule for one operation costs the others a comparison or two, not the whole stack."""
        try:
            rules = self.current()
        except StateUnavailable:  # the whole stack, where `Faults` answers 503
            return False
        if not rules:
            return True
        if rules is not self._screened:
            self._screen = [
                (operation.method, pattern)
                for pattern, operation in self.index.operations
                if any(rule.session is None and matches(rule, operation) for rule in rules)
            ]
            self._screened = rules
        method, path = scope["method"], None
        for candidate, pattern in self._screen:
            if candidate == method:
                path = path or routing_path(scope)
                if pattern.fullmatch(path):
                    return False
        return True

    def active(self) -> bool:
        """Whether any rule is installed: read per request, so it must cost next to nothing."""
        return bool(self.rules)

    def listed(self) -> list[Rule]:
        """The rules as installed, each `count` what is left of it."""
        return self.rules

    def replace(self, rules: list[Rule]) -> None:
        self.rules = rules

    def current(self) -> list[Rule]:
        """The rules a request is matched against."""
        return self.rules

    def spend(self, position: int, rule: Rule) -> bool:
        """Take one of `rule`'s `count` (it is not 0); False if none was left to take."""
        assert rule.count is not None
        rule.count -= 1
        return True

    def pick(self, scope: Scope, operation: Operation) -> Rule | None:
        """The first rule matching the request of `operation` that fires (its probability), its count spent."""
        rules = self.current()
        session = next(iter(requested(scope["headers"])), None) if any(r.session for r in rules) else None
        for position, rule in enumerate(rules):
            if rule.count == 0 or not (matches(rule, operation) and rule.session in (None, session)):
                continue
            if rule.probability < 1 and self.rng.random() >= rule.probability:
                continue
            if rule.count is not None and not self.spend(position, rule):
                continue
            return rule
        return None


def matches(rule: Rule, operation: Operation) -> bool:
    """Whether `rule` names `operation` (its session aside)."""
    return (
        rule.method in (None, operation.method)
        and rule.path in (None, operation.template)
        and rule.operationId in (None, operation.operation_id)
        and rule.surface in (None, operation.surface)
    )


class Faults:
    """ASGI middleware, the outermost: it owns the connection, so it can close it."""

    def __init__(self, app: ASGIApp, rules: FaultRules, journal: Journal) -> None:
        self.app = app
        self.rules = rules
        self.journal = journal

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        asking = scope["type"] == "http" and (self.rules.active() or sent(scope))
        operation = self.rules.index.find(scope["method"], routing_path(scope)) if asking else None
        if operation is None:  # only the spec's operations meet faults and Prefer
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        try:
            preferred = preferences(scope, operation)
        except PreferenceError as error:  # the outermost layer to read Prefer answers for every preference
            await send_problem(send, 400, error.detail)
            return
        delay_ms = preferred.delay_ms if preferred is not None else None
        try:
            rule = self.rules.pick(scope, operation) if self.rules.active() else None
        except StateUnavailable as error:  # the rules are shared, and Redis does not answer
            await send_problem(send, 503, str(error))
            self.journal.record(scope, started, 503)
            return
        if rule is None and delay_ms is None:
            await self.app(scope, receive, send)
            return
        wait = (delay_ms or 0) / 1000
        if rule is not None:
            wait += rule.delay(self.rules.rng.lognormvariate)
        note = {"fault": rule.fault if rule else "delay", "delay_ms": round(wait * 1000, 3)}
        if rule is not None:
            note["rule"] = rule.as_json()
        scope[FAULT] = note
        if wait:
            await asyncio.sleep(wait)
        kind = rule.fault if rule else "delay"
        if kind == "status":
            assert rule is not None and rule.status is not None
            await send_problem(send, rule.status, f"Injected fault: status {rule.status}.")
            self.journal.record(scope, started, rule.status, fault=note)
        elif kind == "drop":
            await hang_up(scope)
            self.journal.record(scope, started, None, fault=note)
        elif kind == "delay":
            await self.app(scope, receive, send)
        else:
            await self.app(scope, receive, Mangled(send, kind))
            if kind != "empty":
                await hang_up(scope)


def routing_path(scope: Scope) -> str:
    """The path as `addressing.RawPath` (inside this layer) will route it, as far as the operation
    goes: an escaped `/` stays inside its segment (`/productlines/Slash%2FLine/` is one line)."""
    raw: bytes | None = scope.get("raw_path")
    if not raw or b"%" not in raw:
        return str(scope["path"])
    return "/".join(unquote(segment).replace("/", "%2F") for segment in raw.decode("latin-1").split("/"))


class Mangled:
    """A `send` that spoils the answer: `empty` keeps status and headers, `cut` and `lost` send less."""

    def __init__(self, send: Send, kind: str) -> None:
        self.send = send
        self.kind = kind
        self.body = bytearray()

    async def __call__(self, message: Message) -> None:
        if self.kind == "lost":
            return
        if message["type"] == "http.response.start":
            if self.kind == "empty":
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"content-length"]
                message = {**message, "headers": [*headers, (b"content-length", b"0")]}
            await self.send(message)
        elif message["type"] == "http.response.body":
            self.body.extend(message.get("body", b""))
            if message.get("more_body", False):
                return
            if self.kind == "empty":
                await self.send({"type": "http.response.body", "body": b""})
            else:  # cut: half, and the promise of more that never comes
                await self.send(
                    {"type": "http.response.body", "body": bytes(self.body[: len(self.body) // 2]), "more_body": True}
                )


def note_connection(scope: Scope, send: Send) -> None:
    """Keep, weakly, the server's object behind `send` (uvicorn's: it has the `transport`)."""
    try:
        scope[CONNECTION] = weakref.ref(send.__self__)  # type: ignore[attr-defined]
    except (AttributeError, TypeError):  # a plain function, or an object that takes no weak reference
        scope[CONNECTION] = None


def connection(scope: Scope) -> Any:
    """The server's per-request object noted by `note_connection`, or None."""
    noted = scope.get(CONNECTION)
    return noted() if noted is not None else None


async def hang_up(scope: Scope) -> None:
    """Close the client's connection now, whatever was sent (uvicorn: the transport behind its `send`)."""
    cycle = connection(scope)
    transport = getattr(cycle, "transport", None)
    if transport is None:
        raise ConnectionAbortedError("injected fault: this server gives no access to the connection")
    transport.close()
    for _ in range(10):  # let the server see the connection lost before it checks for an answer
        if getattr(cycle, "disconnected", True):
            return
        await asyncio.sleep(0)
