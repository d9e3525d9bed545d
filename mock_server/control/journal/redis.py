"""The request journal of a shared state: one Redis list that every replica appends to.

So "was this called N times" has one answer behind a load balancer.

A request never waits for Redis. `record` keeps the exchange in this replica's ring, as the in-memory
`Journal` does. The first exchange of a batch schedules its push for the next event-loop iteration.
The push is one MULTI (RPUSH, LTRIM to `journal_size`, INCRBY of the counter) with every exchange
answered meanwhile. It is written to a connection that Redis sends no replies to (`Pusher`). So a
push is one send, never a wait: waiting for a pipeline's reply took a lone GET from 0.25 to 0.47 ms.
An exchange is thus in Redis one iteration after its response, unless the OS preempts the replica in
between. A read pushes this replica's batch in the MULTI of its LRANGE.

Ids are unique across replicas. The counter is the number of entries ever pushed, so an entry's id is
the counter less the entries pushed after it.

Redis failing while recording drops the batch. There is one warning per outage, and no push is tried
for `RETRY_S`. A read while Redis does not answer is `StateUnavailable` (503). An entry is stored raw,
as JSON with its bytes as latin-1 text, which loses nothing. Masking and the rest happen at read time
(`Journal.as_json`), so both journals answer the same JSON.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Iterable
from typing import Any, Protocol, cast

import orjson
import redis
from starlette.types import Scope

from mock_server.control.journal.base import NO_HEADERS, Entry, Journal, RawHeaders
from mock_server.spec.operations import OperationIndex
from mock_server.spec.quoting import cut
from mock_server.state.redis.layout import HASH_TAG
from mock_server.state.redis.store import unavailable

# A LIST of the entries, oldest first. Each is a JSON array of `Entry`'s fields but the id.
ENTRIES = f"{HASH_TAG}:journal"
PUSHED = f"{HASH_TAG}:journal:pushed"  # The number of entries ever pushed, which is the id of the newest.
KEY_ENTRIES, KEY_PUSHED = ENTRIES.encode(), PUSHED.encode()
RETRY_S = 1.0  # After a failed push, batches are dropped without asking Redis for this long.
PUSH_TIMEOUT_S = 0.25  # A push Redis does not take in this long is dropped, so requests wait for no more.
IDLE_S = 1.0  # A push after this long without one first checks that Redis did not close the connection.
FOLLOW_S = 0.1  # While a dashboard page is open, Redis is asked this often for the entries pushed since.
READ_TIMEOUT_S = 2.0  # A read (a list, a look for the stream) that Redis does not answer in this long has failed.

# The keys are ENTRIES and PUSHED. The arguments are the id seen last (-1 for none yet) and the list's
# size. The answer is the newest id and the entries after the one seen. It is one script, so that the
# id and the list are of one moment.
NEWER = """
local pushed = tonumber(redis.call('GET', KEYS[2]) or '0')
local seen = tonumber(ARGV[1])
if seen < 0 or pushed <= seen then return {pushed, {}} end
local count = math.min(pushed - seen, tonumber(ARGV[2]))
return {pushed, redis.call('LRANGE', KEYS[1], -count, -1)}
"""

log = logging.getLogger("mock_server.journal")


class RedisJournal(Journal):
    """`Journal` whose ring is this replica's batch, emptied into Redis each event-loop iteration.

    Every read is of the list all replicas share."""

    def __init__(self, url: str, size: int, index: OperationIndex, replica: str = "") -> None:
        super().__init__(size, index, replica)
        self.size = size
        self.client = bounded_client(url)  # For reads, so a silent Redis is a 503 soon, never a hang.
        self.pusher = Pusher(url)
        self._retry_at = 0.0
        self._failing = False  # Whether the last push failed, and so was logged.
        # The dashboard's streams get every replica's rows, read from Redis every FOLLOW_S while one is open.
        self.followers: list[Callable[[tuple[Any, ...]], None]] = []
        self._following: asyncio.Task[None] | None = None
        self._newer = self.client.register_script(NEWER)

    # Eight parameters because: the columns of one exchange, kept as a tuple on the hot path (no object).
    def record(
        self,
        scope: Scope,
        started: float,
        status: int | None,
        response_headers: RawHeaders = NO_HEADERS,
        request_body: bytes = b"",
        response_body: bytes = b"",
        fault: dict[str, Any] | None = None,
        violations: list[str] | None = None,
    ) -> None:
        super().record(scope, started, status, response_headers, request_body, response_body, fault, violations)
        if len(self.rows) == 1:
            asyncio.get_running_loop().call_soon(self._push)

    def entries(self) -> list[Entry]:
        """Every replica's entries, oldest first, in the order they reached Redis."""
        try:
            with self.client.pipeline() as pipe:
                for command in self._batch():
                    pipe.execute_command(*command)  # type: ignore[no-untyped-call]  # redis-py's own is untyped.
                pipe.lrange(ENTRIES, 0, -1)
                pipe.get(PUSHED)
                *_, rows, pushed = pipe.execute()
        except redis.RedisError as error:
            raise unavailable(error, "journal") from None
        first = int(pushed or 0) - len(rows) + 1
        return [entry(first + n, row) for n, row in enumerate(rows)]

    def follow(self, subscriber: Callable[[tuple[Any, ...]], None]) -> None:
        """Call `subscriber` with every replica's rows from now on, read from Redis every `FOLLOW_S`."""
        self.followers.append(subscriber)
        if self._following is None:
            try:  # Look now, so that what is pushed after the page opened is shown, however soon.
                seen: int | None = self._rows_after(None)[0]
            except redis.RedisError:
                seen = None
            self._following = asyncio.get_running_loop().create_task(self._follow(seen))

    def unfollow(self, subscriber: Callable[[tuple[Any, ...]], None]) -> None:
        if subscriber in self.followers:
            self.followers.remove(subscriber)
        if not self.followers and self._following is not None:
            self._following.cancel()
            self._following = None

    async def _follow(self, seen: int | None) -> None:
        """Hand each follower the rows pushed since the last look, at most the journal's size."""
        failing = False
        while True:
            try:
                seen, rows = await asyncio.to_thread(self._rows_after, seen)
                failing = False
            except redis.RedisError as error:
                if not failing:
                    log.warning("The dashboard's stream misses requests while the shared state fails (%s).", error)
                failing = True
                rows = []
            for row in rows:
                for follower in list(self.followers):
                    follower(row)
            await asyncio.sleep(FOLLOW_S)

    def _rows_after(self, seen: int | None) -> tuple[int, list[tuple[Any, ...]]]:
        """The id of the newest entry, and the rows of those after `seen`. With `seen` None, only the id."""
        pushed, stored = self._newer(keys=[ENTRIES, PUSHED], args=[-1 if seen is None else seen, self.size])
        first = int(pushed) - len(stored) + 1
        return int(pushed), [stored_row(first + n, text) for n, text in enumerate(stored)]

    def clear(self) -> None:
        """Clear every replica's entries. Ids go on from the last one."""
        self.rows.clear()
        try:
            self.client.delete(ENTRIES)
        except redis.RedisError as error:
            raise unavailable(error, "journal") from None

    def _push(self) -> None:
        """Send the batch, or drop it, because a request never fails, nor waits, for the journal."""
        if time.monotonic() < self._retry_at:
            self.rows.clear()
            return
        batch = self._batch()
        if not batch:  # A read took it.
            return
        try:
            self.pusher.send([b"MULTI"], *batch, [b"EXEC"])
        except redis.RedisError as error:
            self._retry_at = time.monotonic() + RETRY_S
            if not self._failing:
                shown = cut(str(error))
                log.warning("The request journal is not kept while the shared state does not answer (%s).", shown)
            self._failing = True
            return
        self._failing = False

    def _batch(self) -> list[list[bytes]]:
        """The commands that push the batch, none for an empty one. The batch is then forgotten."""
        rows = [stored(row, self.replica) for row in self.rows]
        self.rows.clear()
        if not rows:
            return []
        return [
            [b"RPUSH", KEY_ENTRIES, *rows],
            [b"LTRIM", KEY_ENTRIES, b"%d" % -self.size, b"-1"],
            [b"INCRBY", KEY_PUSHED, b"%d" % len(rows)],
        ]


class Connection(Protocol):
    """What is used of one redis-py connection, because its methods carry no type hints."""

    def connect(self) -> None: ...

    def disconnect(self) -> None: ...

    def can_read(self, timeout: float = 0) -> bool: ...

    def send_packed_command(self, command: list[bytes], check_health: bool = True) -> None: ...


class Pusher:
    """A connection that Redis sends no replies to (CLIENT REPLY OFF), so a push costs one send and never waits.

    A connection that Redis closed is replaced at once, and its push is sent once more. A send finds it
    closed. So does a poll after `IDLE_S` without any send, because an idle one may have timed out."""

    def __init__(self, url: str) -> None:
        pool = redis.ConnectionPool.from_url(url, socket_timeout=PUSH_TIMEOUT_S, socket_connect_timeout=PUSH_TIMEOUT_S)
        self._connect_to: Callable[[], Connection] = lambda: cast(Connection, pool.make_connection())
        self._connection: Connection | None = None
        self._sent_at = time.monotonic()
        with contextlib.suppress(redis.RedisError):  # Connect now, so the first push waits for no set-up.
            self._connection = self._connected()

    def send(self, *commands: list[bytes]) -> None:
        """Send `commands`, whose replies are never read. It raises RedisError if no connection takes them."""
        packet = packed(*commands)
        connection, now = self._connection, time.monotonic()
        if connection is not None and (now - self._sent_at < IDLE_S or _open(connection)):
            try:
                connection.send_packed_command([packet], check_health=False)
                self._sent_at = now
                return
            except redis.RedisError:
                pass  # Closed under us, and redis-py has disconnected it. Send once more, on a new connection.
        self._connection = None
        connection = self._connected()
        connection.send_packed_command([packet], check_health=False)
        self._connection, self._sent_at = connection, now

    def _connected(self) -> Connection:
        connection = self._connect_to()
        connection.connect()
        connection.send_packed_command([packed([b"CLIENT", b"REPLY", b"OFF"])], check_health=False)
        return connection


def _open(connection: Connection) -> bool:
    """Whether Redis kept `connection` open. Redis sends nothing there but an end of file, on closing it."""
    try:
        if not connection.can_read(timeout=0):
            return True
    except redis.RedisError:
        pass
    connection.disconnect()
    return False


def bounded_client(url: str) -> redis.Redis:
    """A client whose every wait is bounded, so a silent Redis fails a read (503), never hangs it."""
    client = redis.Redis.from_url(url, socket_timeout=READ_TIMEOUT_S, socket_connect_timeout=READ_TIMEOUT_S)
    with contextlib.suppress(redis.RedisError):  # Connect now, not during a request (backends.connected).
        client.ping()
    return client


def packed(*commands: list[bytes]) -> bytes:
    """`commands` in RESP, the protocol's request form. Each entry is copied once, as a batch is ~100 KiB of them."""
    parts = []
    for command in commands:
        parts.append(b"*%d\r\n" % len(command))
        for part in command:
            parts += (b"$%d\r\n" % len(part), part, b"\r\n")
    return b"".join(parts)


def stored(row: tuple[Any, ...], replica: str) -> bytes:
    """A row of the ring, less its local id, as JSON, with the replica that served it.

    Its bytes are latin-1 text, one character a byte."""
    _, at, method, path, query, status, duration, asked, answered, request_body, response_body, fault, violations = row
    return orjson.dumps(
        (
            at,
            method,
            path,
            query.decode("latin-1"),
            status,
            duration,
            _text(asked),
            _text(answered),
            request_body.decode("latin-1"),
            response_body.decode("latin-1"),
            fault,
            violations,
            replica,
        )
    )


def entry(id_: int, text: bytes) -> Entry:
    """The entry that `stored` wrote, as `Journal` keeps it."""
    return Entry(*stored_row(id_, text))


def stored_row(id_: int, text: bytes) -> tuple[Any, ...]:
    """The row of `Entry`'s fields that `stored` wrote. An entry of an older version names no replica."""
    fields = orjson.loads(text)
    at, method, path, query, status, duration, asked, answered, request_body, response_body = fields[:10]
    return (
        id_,
        at,
        method,
        path,
        query.encode("latin-1"),
        status,
        duration,
        _raw(asked),
        _raw(answered),
        request_body.encode("latin-1"),
        response_body.encode("latin-1"),
        fields[10],  # The fault.
        fields[11],  # The violations.
        fields[12] if len(fields) > 12 else "",
    )


def _text(headers: RawHeaders) -> list[tuple[str, str]]:
    return [(name.decode("latin-1"), value.decode("latin-1")) for name, value in headers]


def _raw(headers: Iterable[list[str]]) -> RawHeaders:
    return [(name.encode("latin-1"), value.encode("latin-1")) for name, value in headers]
