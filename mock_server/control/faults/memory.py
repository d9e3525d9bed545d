"""The fault rules of this process, and the choice of the one a request meets.

A shared state's replicas share theirs instead, in `redis.RedisFaultRules`, a subclass. With no rules,
a request costs one empty-list check, because `active` is read per request.
"""

from __future__ import annotations

import random
import re

from starlette.types import Scope

from mock_server.control.faults.rules import Rule, matches, routing_path
from mock_server.control.mock_sessions.registry import requested
from mock_server.spec.operations import Operation, OperationIndex
from mock_server.state.store import StateUnavailable


class FaultRules:
    """The installed rules, and the choice of the one, if any, a request meets.

    These are this process's own. A shared state's replicas share theirs in `redis.RedisFaultRules`.
    """

    def __init__(self, index: OperationIndex, rng: random.Random | None = None) -> None:
        self.index = index
        self.rules: list[Rule] = []
        self.rng = rng or random.Random()
        self._screened: list[Rule] = []  # The rules `_screen` was made for.
        self._screen: list[tuple[str, re.Pattern[str]]] = []

    def passes(self, scope: Scope) -> bool:
        """Whether no rule can meet this request, which names no session.

        `bypass.Bypass` takes only such requests. The request is checked against the method and path
        pattern of each operation some rule names. So a rule for one operation costs the others a
        comparison or two, not the whole stack.
        """
        try:
            rules = self.current()
        except StateUnavailable:  # The request takes the whole stack, where `Faults` answers 503.
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
        """Whether any rule is installed. It is read per request, so it must cost next to nothing."""
        return bool(self.rules)

    def listed(self) -> list[Rule]:
        """The rules as installed, each `count` being what is left of it."""
        return self.rules

    def replace(self, rules: list[Rule]) -> None:
        self.rules = rules

    def current(self) -> list[Rule]:
        """The rules a request is matched against."""
        return self.rules

    def spend(self, position: int, rule: Rule) -> bool:
        """Take one of `rule`'s `count`, which is not 0. False if none was left to take."""
        assert rule.count is not None
        rule.count -= 1
        return True

    def pick(self, scope: Scope, operation: Operation) -> Rule | None:
        """The first rule matching the request of `operation` that fires by its probability, with its count spent."""
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
