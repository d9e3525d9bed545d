"""The realm's memory shared by the replicas of one Redis state.

So a login started on one replica is finished on another. A code issued by one is redeemed, once, on
any. A logout through one ends the session for all.

Each map is one key per entry, `<prefix><map>:<key>`, expiring with the entry. Beside them is a sorted
set of its keys by the time they were put, trimmed to the map's capacity. The oldest go first, as in
`Expiring`. `pop` is GETDEL, and `swap` a Lua compare-and-set. So a code is redeemed once and a
refresh token turned once, whichever replicas are asked at the same moment. A value is written before
the answer that names it leaves, so a replica killed afterwards has lost none. Redis not answering
within the client's socket timeout is `RealmUnavailable`, a 503 at the realm's endpoints.
"""

from __future__ import annotations

from typing import Generic, TypeVar

import redis

from mock_server.ops.instruments import REDIS_ERRORS
from mock_server.realm.logins import Codec, RealmUnavailable, Remembered

Kept = TypeVar("Kept")

# KEYS are the entry and the map's index. ARGV are the value, its ttl in ms, and the map's capacity.
PUT = """
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
local now = redis.call('TIME')
redis.call('ZADD', KEYS[2], tonumber(now[1]) * 1000000 + tonumber(now[2]), KEYS[1])
local extra = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[3])
if extra > 0 then
  local oldest = redis.call('ZPOPMIN', KEYS[2], extra)
  for i = 1, #oldest, 2 do redis.call('DEL', oldest[i]) end
end
"""
# KEYS is the entry. ARGV are the value expected, the new value, and its ttl in ms.
SWAP = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1
"""
UNAVAILABLE = "The realm's shared memory did not answer."


class RedisMemory:
    """The realm's maps under `prefix`, with the state's hash tag, in the database `client` names."""

    def __init__(self, client: redis.Redis, prefix: str) -> None:
        self.client = client
        self.prefix = prefix
        self._put = client.register_script(PUT)
        self._swap = client.register_script(SWAP)

    def map(self, name: str, codec: Codec[Kept], capacity: int) -> Remembered[Kept]:
        return RedisMap[Kept](self, f"{self.prefix}{name}:", codec, capacity)


class RedisMap(Generic[Kept]):
    def __init__(self, memory: RedisMemory, prefix: str, codec: Codec[Kept], capacity: int) -> None:
        self.memory = memory
        self.prefix = prefix
        self.index = f"{prefix}index"  # No entry key is this, because entries are `prefix` + ":" + key.
        self.codec = codec
        self.capacity = capacity

    def put(self, key: str, value: Kept, ttl: float) -> None:
        try:
            args: list[bytes | int] = [self.codec.encode(value), _ms(ttl), self.capacity]
            self.memory._put(keys=[self._key(key), self.index], args=args)
        except redis.RedisError as error:
            raise lost() from error

    def get(self, key: str) -> Kept | None:
        try:
            data = self.memory.client.get(self._key(key))
        except redis.RedisError as error:
            raise lost() from error
        return None if data is None else self.codec.decode(bytes(data))  # type: ignore[arg-type]  # bytes: no decode_responses

    def pop(self, key: str) -> Kept | None:
        try:
            with self.memory.client.pipeline() as pipe:
                pipe.getdel(self._key(key))
                pipe.zrem(self.index, self._key(key))
                data, _ = pipe.execute()
        except redis.RedisError as error:
            raise lost() from error
        return None if data is None else self.codec.decode(data)

    def swap(self, key: str, expected: Kept, value: Kept, ttl: float) -> bool:
        old, new = self.codec.encode(expected), self.codec.encode(value)
        try:
            return bool(self.memory._swap(keys=[self._key(key)], args=[old, new, _ms(ttl)]))
        except redis.RedisError as error:
            raise lost() from error

    def _key(self, key: str) -> str:
        return f"{self.prefix}:{key}"


def lost() -> RealmUnavailable:
    """The realm's error, a 503, for a failed Redis call. It is counted as the realm's in `ops.instruments`."""
    REDIS_ERRORS.labels("realm").inc()
    return RealmUnavailable(UNAVAILABLE)


def _ms(seconds: float) -> int:
    return max(1, round(seconds * 1000))
