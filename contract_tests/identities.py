"""One identity space per run: every identifier the suite makes, for any surface, phase or worker.

The domain tests and the Schemathesis hooks draw from the same `Identities`. So the gateway pass never
re-creates what the backend pass created. A backend that refuses a duplicate with 400 is then never
refused by the suite's own doing.

A run starts at a random point of a large space, so reruns against the same database do not meet
either. Two runs of 10,000 creates overlap with a chance below 1 in 10^3 for integers, and 1 in 10^7
for strings.
"""

from __future__ import annotations

import itertools
import random
import re
import string
import threading
from typing import Any, TypeVar

INTEGER_FLOOR = 1_000_000_000  # Far above a real data set's numbers, within int32.
RUN_MARK_LENGTH = 5
RUN_MARK_ALPHABET = string.ascii_lowercase + string.digits
COUNTER_DIGITS = 5
"""The room a string identifier keeps for its counter, which one run does not pass. A stem kept one
character shorter once the counter reached 1,000 could lose a "." that a target answers otherwise,
so how much of a generated stem was sent depended on how many identifiers other parts had made first."""
V = TypeVar("V", int, str)
DIGITS = re.compile(r"[0-9]{1,19}")


class Identities:
    """Fresh identifiers within a field's bounds. It is thread-safe, since Schemathesis workers share one."""

    def __init__(self, rng: random.Random | None = None) -> None:
        rng = rng or random.SystemRandom()
        self.mark = "".join(rng.choice(RUN_MARK_ALPHABET) for _ in range(RUN_MARK_LENGTH))
        self._start = rng.randrange(2**20)
        self._counter = itertools.count(1)
        self._lock = threading.Lock()
        self._issued: set[Any] = set()

    def _next(self) -> int:
        with self._lock:
            return next(self._counter)

    def issued(self, value: Any) -> bool:
        """Whether this run made `value`, or its text as a path carries it. Such a value differs from one run
        to the next, so it is masked where two runs are compared (judge/canonical.py)."""
        if isinstance(value, bool) or not isinstance(value, int | str):
            return False
        return value in self._issued or (
            isinstance(value, str) and DIGITS.fullmatch(value) is not None and int(value) in self._issued
        )

    def _made(self, value: V) -> V:
        with self._lock:
            self._issued.add(value)
        return value

    def derived(self, value: V) -> V:
        """`value`, made from one of this run's (a made number spelled otherwise, or a digit more), counted
        as this run's: it differs from one run to the next as its source does."""
        return self._made(value)

    def integer(self, prop: dict[str, Any]) -> int:
        """A number no other create of this run made, between the field's bounds."""
        low = max(int(prop.get("minimum", INTEGER_FLOOR)), INTEGER_FLOOR)
        high = int(prop.get("maximum", 2**31 - 1))
        span = high - low + 1
        return self._made(low + (self._start * 1_000 + self._next()) % span)

    def string(self, prop: dict[str, Any], stem: str = "ct") -> str:
        """`stem` with the run's mark and a counter, cut to the field's maxLength.

        The part of `stem` kept leaves room for `COUNTER_DIGITS`, whatever the counter's value: the
        counter is the order in which parts ask, which is the timing's (judge/canonical.py)."""
        suffix = f"~{self.mark}{self._next()}"
        limit = prop.get("maxLength", 50)
        room = max(0, limit - 1 - RUN_MARK_LENGTH - COUNTER_DIGITS)
        return self._made((stem[:room] + suffix)[-limit:])

    def fresh(self, prop: dict[str, Any], stem: Any = None) -> Any:
        """A fresh value of the field `prop` describes; a string keeps as much of `stem` as fits."""
        if prop.get("type") == "integer":
            return self.integer(prop)
        return self.string(prop, stem if isinstance(stem, str) else "ct")
