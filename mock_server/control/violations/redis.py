"""The validation proxy's violations shared by the replicas of one Redis state.

Any replica records them, and every one lists and clears them. They are one Redis list, `LIST`,
holding the newest `memory.KEPT`. It is pushed to before the proxied answer goes out, so a replica
killed after answering has lost none. A push Redis does not take is logged, not failed. The answer
is the backend's, and the violation is still in the log and in the request's journal entry. Listing
or clearing while Redis does not answer is the store's 503.
"""

from __future__ import annotations

import logging
from dataclasses import asdict
from typing import Any

import orjson
import redis

from mock_server.control.violations.memory import KEPT, Violation, Violations
from mock_server.state.redis.layout import HASH_TAG
from mock_server.state.redis.store import unavailable

LIST = f"{HASH_TAG}:violations"  # A Redis LIST of each violation as JSON, oldest first.

log = logging.getLogger("mock_server.proxy")


class RedisViolations(Violations):
    def __init__(self, client: redis.Redis) -> None:
        super().__init__()
        self.client = client

    def keep(self, violations: list[Violation]) -> None:
        if not violations:
            return
        try:
            with self.client.pipeline() as pipe:
                pipe.rpush(LIST, *(orjson.dumps(asdict(violation)) for violation in violations))
                pipe.ltrim(LIST, -KEPT, -1)
                pipe.execute()
        except redis.RedisError as error:
            log.warning("Violations not shared (the shared state does not answer: %s); they are logged here.", error)

    def as_json(self) -> list[dict[str, Any]]:
        try:
            stored = self.client.lrange(LIST, 0, -1)
        except redis.RedisError as error:
            raise unavailable(error, "violations") from None
        return [orjson.loads(item) for item in stored]

    def clear(self) -> None:
        try:
            self.client.delete(LIST)
        except redis.RedisError as error:
            raise unavailable(error, "violations") from None
