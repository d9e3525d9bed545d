"""A replica's copy of what it read from Redis, kept only while Redis says nothing in it changed.

Most reads ask again for what did not change since they last asked. Each of them costs the Redis
store a round trip to another process. So the copy uses Redis's server-assisted client-side caching,
in broadcast mode (`CLIENT TRACKING ON BCAST PREFIX <live state>`). Redis then sends this replica a
message for every write by any replica to a key of the live state, a reset, an import or a flush
included. Before a read answers from the copy, it drains those messages without waiting, in one poll
of one socket. Any message drops the whole copy.

A copy is as fresh as Redis, for this reason. Redis queues a write's invalidation in the same pass of
its event loop as the write's reply, and it writes both out before it serves anyone else. So a
request that starts after a write's response, on any replica of the same host, finds the message
already in this replica's socket. Across hosts a network could in principle deliver the reply first.
The window is then the difference of two deliveries. This replica's own writes drop the copy at once.

There is no copy without a tracking connection known to be alive. That is the case when the
connection failed, went silent, or the server cannot track. Every read then goes to Redis, and a new
connection is tried at most once a second.

The tracking connection is opened as the replica starts. It is opened again by a thread of its own,
never on the event loop. Opening it resolves Redis's host name, and a DNS server that does not answer
holds `getaddrinfo` for seconds. Podman's DNS server does that while a container joins the network.
No socket timeout bounds that wait, and the whole replica stopped answering meanwhile. Until the
thread hands the new connection over, every read goes to Redis.
"""

from __future__ import annotations

import math
import threading
import time
import urllib.parse
from collections.abc import Callable, Hashable
from typing import Any, Protocol, TypeVar, cast

import redis

T = TypeVar("T")

CHANNEL = "__redis__:invalidate"
RETRY_S = 1.0  # The wait between attempts to open a tracking connection after one failed.
PROOF_S = 1.0  # The copy answers only while the tracking connection answered within this.
SILENCE_S = 5.0  # A PING unanswered this long means the tracking connection is taken for lost.
SIZE = 100_000  # The records the copy holds before it starts again empty. That is tens of MiB at most.


class Connection(Protocol):
    """What is used of one redis-py connection, typed here because its methods carry no type hints."""

    def connect(self) -> None: ...

    def disconnect(self) -> None: ...

    def send_command(self, *args: object) -> None: ...

    def read_response(self) -> Any: ...

    def can_read(self, timeout: float = 0) -> bool: ...


class LocalCopy:
    """Answers of earlier reads by key, dropped on any change to the keys under `prefix`."""

    def __init__(self, url: str, prefix: str, size: int = SIZE, timeout: float | None = None) -> None:
        # `timeout` bounds each wait for Redis. None keeps redis-py's default.
        bounds = {} if timeout is None else {"socket_timeout": timeout, "socket_connect_timeout": timeout}
        pool = redis.ConnectionPool.from_url(resp2(url), **bounds)
        self._connect_to: Callable[[], Connection] = lambda: cast(Connection, pool.make_connection())
        self.prefix = prefix
        self.size = size
        self._answers: dict[Hashable, tuple[int, Any]] = {}
        self._held = 0  # The records in `_answers`.
        self._generation = 0  # It counts drops, so an answer read across a drop is not kept.
        self._connection: Connection | None = None
        self._opened: Connection | None = None  # A tracking connection the opening thread handed over.
        self._opening = False  # Whether that thread runs.
        self._retry_at = 0.0
        self._alive_at = 0.0  # When the tracking connection last answered.
        self._pinged_at: float | None = None  # When the PING still unanswered was sent.
        self._opening = True
        self._track()  # The first one opens before the replica serves, where a wait stops no request.

    def read(self, key: Hashable, fetch: Callable[[], T], records: Callable[[T], int] = lambda _: 1) -> T:
        """`fetch()`'s answer, from the copy while Redis has reported no change since it was read."""
        if not self._tracking():
            return fetch()
        kept = self._answers.get(key)
        if kept is not None:
            return kept[1]  # type: ignore[no-any-return]
        generation = self._generation
        answer = fetch()
        if generation == self._generation:
            held = records(answer)
            if self._held + held > self.size:
                self.drop()
            self._answers[key] = (held, answer)
            self._held += held
        return answer

    def drop(self) -> None:
        """Forget every answer, because something changed or may have."""
        self._answers.clear()
        self._held = 0
        self._generation += 1

    def _tracking(self) -> bool:
        """Drain Redis's messages. False while no connection is tracking, and then nothing is kept.

        A connection can be silently dead, as on a host that lost its network while Redis restarted.
        So the copy answers only while the connection answered a PING within the last `PROOF_S`.
        """
        connection = self._connection or self._adopt()
        if connection is None:
            return False
        now = time.monotonic()
        try:
            while connection.can_read(timeout=0):
                if connection.read_response()[0] == b"pong":
                    self._alive_at, self._pinged_at = now, None
                else:
                    self.drop()
            if self._pinged_at is None and now - self._alive_at > PROOF_S / 2:
                connection.send_command("PING")
                self._pinged_at = now
            elif self._pinged_at is not None and now - self._pinged_at > SILENCE_S:
                raise redis.ConnectionError(f"no answer to a PING in {SILENCE_S:g} s")
        except (redis.RedisError, OSError):
            self._lost(connection)
            return False
        if now - self._alive_at > PROOF_S:
            self.drop()
        return True

    def _adopt(self) -> Connection | None:
        """The tracking connection the opening thread handed over, else None.

        On None the opening thread is started, unless it runs or failed less than `RETRY_S` ago.
        """
        connection, self._opened = self._opened, None
        if connection is None:
            if not self._opening and time.monotonic() >= self._retry_at:
                self._opening = True
                threading.Thread(target=self._track, name="redis-tracking", daemon=True).start()
            return None
        self.drop()  # What was read before tracking began may have changed unseen.
        self._connection = connection
        self._alive_at, self._pinged_at = time.monotonic(), None
        return connection

    def _track(self) -> None:
        """Open a connection that Redis sends the live state's invalidations to, and hand it over in `_opened`.

        It runs in the opening thread, which touches nothing else of the copy.
        """
        connection = self._connect_to()
        try:
            connection.connect()
            connection.send_command("CLIENT", "ID")
            own_id = connection.read_response()
            connection.send_command("CLIENT", "TRACKING", "ON", "REDIRECT", own_id, "BCAST", "PREFIX", self.prefix)
            connection.read_response()
            connection.send_command("SUBSCRIBE", CHANNEL)
            connection.read_response()
            self._opened = connection
        except redis.ResponseError:  # A server before Redis 6 cannot track, so it is never asked again.
            connection.disconnect()
            self._retry_at = math.inf
        except (redis.RedisError, OSError):
            connection.disconnect()
            self._retry_at = time.monotonic() + RETRY_S
        finally:
            self._opening = False

    def _lost(self, connection: Connection, retry_s: float = RETRY_S) -> None:
        connection.disconnect()
        self._connection = None
        self._retry_at = time.monotonic() + retry_s
        self.drop()


def resp2(url: str) -> str:
    """`url` asking for RESP2, because there invalidations arrive as plain pub/sub messages on the connection."""
    base, _, query = url.partition("?")
    options = [(name, value) for name, value in urllib.parse.parse_qsl(query) if name != "protocol"]
    return f"{base}?{urllib.parse.urlencode([*options, ('protocol', '2')])}"


class NoCopy:
    """Every read goes to Redis. It serves a state that no replica reads often, such as a session's."""

    def read(self, key: Hashable, fetch: Callable[[], T], records: Callable[[T], int] = lambda _: 1) -> T:
        return fetch()

    def drop(self) -> None:
        """Nothing is kept, so there is nothing to forget."""
