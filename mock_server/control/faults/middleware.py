"""Latency and faults, as WireMock injects them, by `Prefer: delay=MS` and the rules at /__mock__/faults.

Both apply to the API's operations only. On the admin API and the realm, `Prefer` is ignored and no
rule matches. Every applied fault is noted in the journal.

A delay is `asyncio.sleep`. It holds no lock and no worker, so other requests go on meanwhile.
A request without `Prefer`, with no rules installed, costs one empty-list check and a look in
`header_names`. Closing a connection needs the server's transport (`connection.hang_up`).
"""

from __future__ import annotations

import asyncio
import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mock_server.control.faults.connection import hang_up
from mock_server.control.faults.memory import FaultRules
from mock_server.control.faults.rules import Rule, routing_path
from mock_server.control.journal.base import FAULT, Journal
from mock_server.control.prefer import PreferenceError, preferences, sent
from mock_server.http.middleware import send_problem
from mock_server.ops.instruments import FAULTS
from mock_server.state.store import StateUnavailable


class Faults:
    """ASGI middleware, the outermost, since it owns the connection and so can close it."""

    def __init__(self, app: ASGIApp, rules: FaultRules, journal: Journal) -> None:
        self.app = app
        self.rules = rules
        self.journal = journal

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        asking = scope["type"] == "http" and (self.rules.active() or sent(scope))
        operation = self.rules.index.find(scope["method"], routing_path(scope)) if asking else None
        if operation is None:  # Only the spec's operations meet faults and Prefer.
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        try:
            preferred = preferences(scope, operation)
        except PreferenceError as error:  # The outermost layer to read Prefer answers for every preference.
            await send_problem(send, 400, error.detail)
            return
        delay_ms = preferred.delay_ms if preferred is not None else None
        try:
            rule = self.rules.pick(scope, operation) if self.rules.active() else None
        except StateUnavailable as error:  # The rules are shared, and Redis does not answer.
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
        FAULTS.labels(rule_label(rule), note["fault"]).inc()
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


def rule_label(rule: Rule | None) -> str:
    """A rule as a metric's label, its fields as installed except its remaining `count`, which changes."""
    if rule is None:
        return "Prefer: delay"
    return ",".join(f"{name}={value}" for name, value in sorted(rule.as_json().items()) if name != "count")


class Mangled:
    """A `send` that spoils the answer. `empty` keeps status and headers, and `cut` and `lost` send less."""

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
            else:  # A cut sends half, and the promise of more that never comes.
                await self.send(
                    {"type": "http.response.body", "body": bytes(self.body[: len(self.body) // 2]), "more_body": True}
                )
