"""What a fault rule is, as the admin API takes it at /__mock__/faults, and which request it meets.

A rule matches requests of the API by any of `method`, `path`, `operationId`, `surface` and
`session`. The `path` is a spec path template, and the `surface` is "backend" or "gateway". The
`session` is the request's X-Mock-Session or mock_session cookie
(mock_server.control.mock_sessions.registry). A rule applies one `fault`:

- `delay`: wait `delay_ms`, or a lognormal time of median `median_ms` and shape `sigma`, then serve.
- `status`: answer `status`, an error status, with its problem body, without serving.
- `drop`: close the connection before any answer, without serving.
- `empty`: serve, then answer the status and headers with an empty body.
- `cut`: serve, then send half the body and close the connection.
- `lost`: serve, so a write is committed, then close the connection without an answer.

Any rule may also carry a delay. `probability` (default 1) and `count` limit a rule. `count` is the
next N matches, and by default it is every one. The first matching rule applies. A rule list is
checked whole before it is installed, so that a wrong one changes nothing.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from starlette.types import Scope

from mock_server.control.mock_sessions.registry import NAME, NAME_RULE
from mock_server.control.prefer import MAX_DELAY_MS
from mock_server.spec.inputs import escape_segment
from mock_server.spec.operations import METHODS, Operation, OperationIndex, describe
from mock_server.spec.quoting import quote

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
    """A rule list that cannot be installed. The message names the rule and what is wrong."""


@dataclass
class Rule:
    fault: str
    method: str | None = None
    path: str | None = None
    operationId: str | None = None  # The name the admin API and the spec use.
    surface: str | None = None
    session: str | None = None
    delay_ms: float | None = None
    median_ms: float | None = None
    sigma: float | None = None
    status: int | None = None
    probability: float = 1.0
    count: int | None = None  # How many more times it applies. None means every time.

    def as_json(self) -> dict[str, Any]:
        return {name: value for name, value in vars(self).items() if value is not None}

    def delay(self, draw: Callable[[float, float], float]) -> float:
        """Seconds to wait, fixed or drawn from the lognormal, or none."""
        if self.delay_ms is not None:
            return self.delay_ms / 1000
        if self.median_ms is not None and self.sigma is not None:
            return min(draw(math.log(self.median_ms), self.sigma), MAX_DELAY_MS) / 1000
        return 0.0


def parse_rules(data: Any, index: OperationIndex) -> list[Rule]:
    """The rule list of a PUT, checked whole. RuleError names the first rule and field that is wrong."""
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


def matches(rule: Rule, operation: Operation) -> bool:
    """Whether `rule` names `operation`, its session aside."""
    return (
        rule.method in (None, operation.method)
        and rule.path in (None, operation.template)
        and rule.operationId in (None, operation.operation_id)
        and rule.surface in (None, operation.surface)
    )


def routing_path(scope: Scope) -> str:
    """The path as `addressing.RawPath`, inside this layer, will route it, as far as the operation goes.

    A segment is escaped by the same rule (`inputs.escape_segment`), so `/productlines/Slash%2FLine/` is
    one line."""
    raw: bytes | None = scope.get("raw_path")
    if not raw or b"%" not in raw:
        return str(scope["path"])
    return "/".join(escape_segment(unquote(segment)) for segment in raw.decode("latin-1").split("/"))
