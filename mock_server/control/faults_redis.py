"""Fault rules shared by the replicas of one Redis state: set through any replica, met on every one,
each `count` spent exactly once in all.

The rule list is one key (`RULES`: JSON, with the generation the PUT gave it); each replica keeps
its copy while Redis reports no change to that key (the store's `LocalCopy`: one poll of one
socket per request, and a PUT on any replica is seen by a request that starts after its answer).
What is left of each counted rule is a field of one hash (`COUNTS`, by generation and position),
taken one at a time by a Lua script: two replicas can never spend the same one. A replica that
learns a rule is spent remembers it until the list changes: a spent rule costs no round trip.

While Redis does not answer, a request of the API gets the store's 503 (`Faults`), and the admin
API's fault routes too.
"""

from __future__ import annotations

import random
import uuid
from typing import Any

import orjson
import redis

from mock_server.control.faults import FaultRules, Rule
from mock_server.spec.operations import OperationIndex
from mock_server.state.redis.copy import LocalCopy
from mock_server.state.redis.layout import HASH_TAG
from mock_server.state.redis.store import unavailable
from mock_server.state.store import StateUnavailable

RULES = f"{HASH_TAG}:fault-rules"  # STRING: {"generation": ..., "rules": [...]}, as installed
COUNTS = f"{HASH_TAG}:fault-counts"  # HASH: "<generation>:<position>" -> what is left of that rule's count

# KEYS[1] COUNTS, ARGV[1] the field: what is left after taking one, or -1 if none was left
SPEND = """
local left = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
if left <= 0 then return -1 end
return redis.call('HINCRBY', KEYS[1], ARGV[1], -1)
"""


class RedisFaultRules(FaultRules):
    """`FaultRules` whose rules and counts are in Redis, for every replica of the state at `url`."""

    def __init__(self, client: redis.Redis, url: str, index: OperationIndex, rng: random.Random | None = None) -> None:
        super().__init__(index, rng)
        self.client = client
        self.copy = LocalCopy(url, RULES)
        self._spend = client.register_script(SPEND)
        self._generation = ""

    def active(self) -> bool:
        """Never raises: with Redis silent the request takes the whole stack, where `Faults` answers 503."""
        try:
            return bool(self.current())
        except StateUnavailable:
            return True

    def current(self) -> list[Rule]:
        generation, rules = self.copy.read("rules", self._fetch)
        self._generation = generation
        return rules

    def listed(self) -> list[Rule]:
        """The rules from Redis, each `count` what is left of it in all."""
        try:
            with self.client.pipeline() as pipe:
                pipe.get(RULES)
                pipe.hgetall(COUNTS)
                stored, counts = pipe.execute()
        except redis.RedisError as error:
            raise unavailable(error) from None
        generation, rules = decoded(stored)
        for position, rule in enumerate(rules):
            if rule.count is not None:
                rule.count = int(counts.get(f"{generation}:{position}".encode(), 0))
        return rules

    def replace(self, rules: list[Rule]) -> None:
        """One transaction: the new list and its counts, or nothing (a spent count never comes back)."""
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
            raise unavailable(error) from None
        self.copy.drop()

    def spend(self, position: int, rule: Rule) -> bool:
        try:
            left = int(self._spend(keys=[COUNTS], args=[f"{self._generation}:{position}"]))
        except redis.RedisError as error:
            raise unavailable(error) from None
        rule.count = max(left, 0)  # this replica's copy: 0 is spent for good, until the list changes
        return left >= 0

    def _fetch(self) -> tuple[str, list[Rule]]:
        try:
            return decoded(self.client.get(RULES))
        except redis.RedisError as error:
            raise unavailable(error) from None


def decoded(stored: Any) -> tuple[str, list[Rule]]:
    """The generation and rules `replace` wrote (none: no rules)."""
    if stored is None:
        return "", []
    document = orjson.loads(stored)
    return document["generation"], [Rule(**rule) for rule in document["rules"]]
