"""Fault rules shared by the replicas of one Redis state. They are set through any replica and met on
every one, and each `count` is spent exactly once in all.

The rule list is one key, `RULES`: JSON, with the generation the PUT gave it. Each replica keeps its
copy while Redis reports no change to that key. That is the store's `LocalCopy`, which costs one poll
of one socket per request. A PUT on any replica is seen by a request that starts after its answer.

What is left of each counted rule is a field of one hash, `COUNTS`, by generation and position. A Lua
script takes one at a time, so two replicas can never spend the same one. A replica that learns a
rule is spent remembers it until the list changes. So a spent rule costs no round trip.

While Redis does not answer, a request of the API gets the store's 503 (`Faults`). So do the admin
API's fault routes.
"""

from __future__ import annotations

import random
import time
import uuid
from typing import Any

import orjson
import redis

from mock_server.control.faults.memory import FaultRules
from mock_server.control.faults.rules import Rule
from mock_server.spec.operations import OperationIndex
from mock_server.state.redis.copy import LocalCopy
from mock_server.state.redis.layout import HASH_TAG
from mock_server.state.redis.store import UNAVAILABLE, unavailable
from mock_server.state.store import StateUnavailable

RULES = f"{HASH_TAG}:fault-rules"  # A STRING, {"generation": ..., "rules": [...]}, as installed.
COUNTS = f"{HASH_TAG}:fault-counts"  # A HASH from "<generation>:<position>" to what is left of that rule's count.
RETRY_S = 2.0  # After Redis failed, requests are answered 503 without asking it again for this long.

# KEYS[1] is COUNTS and ARGV[1] the field. It answers what is left after taking one, or -1 if none was left.
SPEND = """
local left = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
if left <= 0 then return -1 end
return redis.call('HINCRBY', KEYS[1], ARGV[1], -1)
"""


class RedisFaultRules(FaultRules):
    """`FaultRules` whose rules and counts are in Redis, for every replica of the state at `url`."""

    def __init__(
        self, client: redis.Redis, url: str, index: OperationIndex, timeout: float, rng: random.Random | None = None
    ) -> None:
        super().__init__(index, rng)
        self.client = client
        self.copy = LocalCopy(url, RULES, timeout=timeout)
        self._spend = client.register_script(SPEND)
        self._generation = ""
        self._retry_at = 0.0

    def active(self) -> bool:
        """Never raises. With Redis silent, the request takes the whole stack, where `Faults` answers 503."""
        try:
            return bool(self.current())
        except StateUnavailable:
            return True

    def current(self) -> list[Rule]:
        """The rules from this replica's copy.

        While Redis failed within `RETRY_S`, it raises StateUnavailable at once. So a request waits for one
        socket timeout per outage, not one per layer."""
        self._check()
        generation, rules = self.copy.read("rules", self._fetch)
        self._generation = generation
        return rules

    def listed(self) -> list[Rule]:
        """The rules from Redis, each `count` being what is left of it in all."""
        self._check()
        try:
            with self.client.pipeline() as pipe:
                pipe.get(RULES)
                pipe.hgetall(COUNTS)
                stored, counts = pipe.execute()
        except redis.RedisError as error:
            raise self._failed(error) from None
        generation, rules = decoded(stored)
        for position, rule in enumerate(rules):
            if rule.count is not None:
                rule.count = int(counts.get(f"{generation}:{position}".encode(), 0))
        return rules

    def replace(self, rules: list[Rule]) -> None:
        """One transaction writes the new list and its counts, or nothing. A spent count never comes back."""
        generation = uuid.uuid4().hex
        counts = {f"{generation}:{n}": rule.count for n, rule in enumerate(rules) if rule.count is not None}
        document = {"generation": generation, "rules": [rule.as_json() for rule in rules]}
        try:
            with self.client.pipeline() as pipe:
                pipe.set(RULES, orjson.dumps(document))
                pipe.delete(COUNTS)
                if counts:
                    pipe.hset(COUNTS, mapping=counts)  # type: ignore[arg-type]  # redis-py's mapping type is too narrow
                pipe.execute()
        except redis.RedisError as error:
            raise self._failed(error) from None
        self.copy.drop()

    def spend(self, position: int, rule: Rule) -> bool:
        try:
            left = int(self._spend(keys=[COUNTS], args=[f"{self._generation}:{position}"]))
        except redis.RedisError as error:
            raise self._failed(error) from None
        rule.count = max(left, 0)  # In this replica's copy, 0 is spent for good until the list changes.
        return left >= 0

    def _fetch(self) -> tuple[str, list[Rule]]:
        try:
            return decoded(self.client.get(RULES))
        except redis.RedisError as error:
            raise self._failed(error) from None

    def _check(self) -> None:
        if time.monotonic() < self._retry_at:
            raise StateUnavailable(UNAVAILABLE)

    def _failed(self, error: redis.RedisError) -> StateUnavailable:
        self._retry_at = time.monotonic() + RETRY_S
        return unavailable(error, "faults")


def decoded(stored: Any) -> tuple[str, list[Rule]]:
    """The generation and rules `replace` wrote, or none when there are no rules."""
    if stored is None:
        return "", []
    document = orjson.loads(stored)
    return document["generation"], [Rule(**rule) for rule in document["rules"]]
