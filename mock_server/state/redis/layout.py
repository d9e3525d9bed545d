"""How the state is laid out in Redis: the key names, and the tokens that put records in identifier order.

A token is a record's identifier as bytes whose byte order is the identifier order. So one sorted
set with every score 0 keeps a collection in page order, read by rank with ZRANGE. It also keeps an
owner's records together, read over a prefix with ZRANGEBYLEX. A token is made this way:

- A string is its UTF-8 bytes, because the byte order of UTF-8 is the code-point order.
- An integer is "p" (or "n" below zero), then its number of digits in two digits, then its digits.
  Below zero the length and every digit are complemented (99 - length, 9 - digit). So a larger
  magnitude sorts first. This is exact for any integer the spec allows, and for any of up to 99
  digits.

One state is these keys, under a prefix. The state served is under `{shop}:live:`.

- `rows:<collection>` is a HASH from a token to the record, a JSON array of its values in field order.
- `order:<collection>` is a ZSET of every token, each with score 0.
- `index:<child>.<field>` is a ZSET of members with score 0. A member is the owner's token escaped,
  NUL, then the child's token. So an owner's records are one lexicographic range, in identifier order.

`{shop}:seed:` keeps the seed, for a reset. `{shop}:staging:<id>:` is a bulk load being written.
`{shop}:snapshot:<id>:` is a copy being read. Both of these expire if their writer dies.
`{shop}:session:<name>:` is a session's state, listed in `{shop}:sessions`. Every key carries the
hash tag `{shop}`, so that a Lua script may touch them all on a Redis Cluster too.
"""

from __future__ import annotations

from dataclasses import dataclass

from mock_server.state.store import COLLECTIONS, RELATIONS, Key, Relation

HASH_TAG = "{shop}"
SEEDED = f"{HASH_TAG}:seeded"  # Set once the seed is in place. It holds the record layout it was written with.
SEEDING = f"{HASH_TAG}:seeding"  # The lock of the replica that seeds.
SHARED = f"{HASH_TAG}:shared:"  # Values every replica agrees on, outside the state, such as the realm's keys.
SEPARATOR = b"\x00"
END = b"\xff"  # A byte no token contains, so prefix + END bounds a prefix's range.


def token(key: Key) -> bytes:
    """The bytes that identify `key` in Redis, in identifier order (see the module docstring)."""
    if isinstance(key, str):
        return key.encode("utf-8", "surrogatepass")
    if isinstance(key, int):
        digits = str(abs(key))
        if len(digits) > 99:
            raise ValueError(f"identifier too large for the Redis store: {len(digits)} digits")
        if key >= 0:
            return f"p{len(digits):02d}{digits}".encode()
        complement = digits.translate(str.maketrans("0123456789", "9876543210"))
        return f"n{99 - len(digits):02d}{complement}".encode()
    raise TypeError(f"an identifier is a string or an integer, not {type(key).__name__}")


def reference_token(value: object) -> bytes:
    """The token a reference names. A value no identifier can have gets one that names no record."""
    return token(value) if isinstance(value, str | int) else END


def owner_prefix(owner: bytes) -> bytes:
    """The start of the index members of `owner`. It is the owner's token escaped so it holds no NUL, then NUL."""
    return owner.replace(b"\x01", b"\x01\x02").replace(SEPARATOR, b"\x01\x01") + SEPARATOR


@dataclass(frozen=True)
class State:
    """The key names of one state (live, seed, staging, snapshot) under `prefix`."""

    prefix: str

    def rows(self, collection: str) -> str:
        return f"{self.prefix}rows:{collection}"

    def order(self, collection: str) -> str:
        return f"{self.prefix}order:{collection}"

    def index(self, relation: Relation) -> str:
        return f"{self.prefix}index:{relation.child}.{relation.field}"

    def every_key(self) -> list[str]:
        """Every key of the state, always in the same order, because the scripts pair them up by position."""
        return [
            *(self.rows(name) for name in COLLECTIONS),
            *(self.order(name) for name in COLLECTIONS),
            *(self.index(relation) for relation in RELATIONS),
        ]


LIVE = State(f"{HASH_TAG}:live:")
SEED = State(f"{HASH_TAG}:seed:")
SESSIONS = f"{HASH_TAG}:sessions"  # A ZSET from a session's name to its deadline, in ms of Redis's clock.
SESSIONS_META = f"{HASH_TAG}:sessions:meta"  # A HASH from a session's name to "created:last_used", in ms.


def session(name: str) -> State:
    """A session's own state: a copy of the seed, made when its first request comes."""
    return State(f"{HASH_TAG}:session:{name}:")


def staging(identifier: str) -> State:
    return State(f"{HASH_TAG}:staging:{identifier}:")


def snapshot(identifier: str) -> State:
    return State(f"{HASH_TAG}:snapshot:{identifier}:")
