"""The validation proxy's violations in this process. The last `KEPT` are listed at /__mock__/violations.

Each violation is logged on one line, kept, and noted in the request's journal entry. Its message is
cut by `quoting.cut` because it quotes the offending value. A request or a response lists at most
`VIOLATIONS_PER_PART`. A shared state's replicas keep theirs in Redis (`redis.RedisViolations`).
"""

from __future__ import annotations

import datetime
import logging
from collections import deque
from dataclasses import asdict, dataclass
from typing import Any

from starlette.types import Scope

from mock_server.control.journal.base import VIOLATIONS
from mock_server.spec.operations import Operation
from mock_server.spec.quoting import cut

KEPT = 500  # The violations kept for /__mock__/violations.
VIOLATIONS_PER_PART = 100  # Listed per request or response, at most one per item of the largest page.
log = logging.getLogger("mock_server.proxy")


@dataclass(frozen=True)
class Violation:
    time: str
    method: str
    path: str
    operationId: str  # The name the admin API and the spec use.
    status: int | None  # The backend's status, or None for a request violation with no answer.
    part: str  # Either "request" or "response".
    message: str


class Violations:
    """This process's violations. A shared state's replicas share theirs (`redis.RedisViolations`)."""

    def __init__(self) -> None:
        self.kept: deque[Violation] = deque(maxlen=KEPT)

    def report(self, scope: Scope, operation: Operation, status: int | None, part: str, problems: list[str]) -> None:
        """Keep, log and note in the journal each of `problems`.

        Each is cut, and only the first `VIOLATIONS_PER_PART` count. The path they are kept and logged
        with is cut too, while the journal keeps it whole.
        """
        now = datetime.datetime.now(datetime.UTC).isoformat(timespec="milliseconds")
        path = cut(scope["path"])  # The client's path may be up to the request head's limit, 32 KiB, in each violation.
        messages = [cut(problem) for problem in problems[:VIOLATIONS_PER_PART]]
        if len(problems) > VIOLATIONS_PER_PART:
            messages.append(f"more violations of this {part} are not listed (the first {VIOLATIONS_PER_PART} are)")
        found = [Violation(now, scope["method"], path, operation.operation_id, status, part, m) for m in messages]
        self.keep(found)
        for violation in found:
            log.warning(
                "spec violation: %s %s (%s) %s: %s",
                violation.method,
                violation.path,
                operation.operation_id,
                part,
                violation.message,
            )
        scope.setdefault(VIOLATIONS, []).extend(f"{part}: {message}" for message in messages)

    def keep(self, violations: list[Violation]) -> None:
        self.kept.extend(violations)

    def as_json(self) -> list[dict[str, Any]]:
        return [asdict(violation) for violation in self.kept]

    def clear(self) -> None:
        self.kept.clear()
