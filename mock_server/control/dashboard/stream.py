"""The journal's exchanges, live, to each open dashboard page, as bounded Server-Sent Events.

A page costs requests nothing while none is open. `Broadcast` subscribes to the journal
(`Journal.subscribers`) when the first stream opens, and leaves it when the last one closes. While
some are open, recording an exchange appends a reference to its row to each stream's queue. The
stream turns the row into JSON outside the request, masked as `GET /__mock__/requests` shows it.

The streams are bounded in these ways:

- At most `MAX_STREAMS` streams are open, and another is a 503.
- A stream whose queue reaches `QUEUE_ROWS` is dropped, because its client reads slower than requests
  arrive. Its connection is closed at once and its rows freed.
- An idle stream gets a comment every `KEEPALIVE_S`.
- When the server stops, each stream sends what it holds and ends (`http.stopping`). So its page sees
  the end, not a reset.

With a shared state, on replicas, a page sees every replica's exchanges. Each names the replica that
served it (`replica`). The shared journal reads them from Redis while a page is open
(`journal.redis.RedisJournal.follow`).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator
from typing import Any

import orjson
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.types import Receive, Scope, Send

from mock_server.control.admin import problem
from mock_server.control.faults.connection import connection
from mock_server.control.journal.base import Entry, Journal
from mock_server.http.stopping import when_stopping
from mock_server.ops.instruments import STREAMS

MAX_STREAMS = 16  # The pages streaming at once.
QUEUE_ROWS = 256  # The exchanges waiting for one stream. With more, its client is too slow.
CHUNK_ROWS = 32  # The exchanges sent at once. What a stream holds beyond its queue is one chunk.
KEEPALIVE_S = 15.0
Row = tuple[Any, ...]


class Listener:
    """One open stream, with its queue of rows and how to hang up on its client."""

    def __init__(self, scope: Scope, limit: int) -> None:
        self.rows: deque[Row] = deque()
        self.limit = limit
        self.ready = asyncio.Event()
        self.dropped = False
        self.stopping = False
        self._scope = scope

    def stop(self) -> None:
        """The server is stopping, so the stream sends what it holds, then ends."""
        self.stopping = True
        self.ready.set()

    def put(self, row: Row) -> bool:
        """Queue `row`. False if the queue was full, and then the stream is dropped and its connection closed."""
        if len(self.rows) >= self.limit:
            self.dropped = True
            self.rows.clear()
            self.ready.set()
            transport = getattr(connection(self._scope), "transport", None)
            if transport is not None:  # Abort under uvicorn, as a close first flushes what the client does not read.
                transport.abort()
            return False
        self.rows.append(row)
        self.ready.set()
        return True


class Broadcast:
    """The open streams of one journal."""

    def __init__(self, journal: Journal, max_streams: int = MAX_STREAMS, queue_rows: int = QUEUE_ROWS) -> None:
        self.journal = journal
        self.max_streams = max_streams
        self.queue_rows = queue_rows
        self.listeners: list[Listener] = []

    def join(self, scope: Scope) -> Listener | None:
        """A new stream, or None when `max_streams` are open."""
        if len(self.listeners) >= self.max_streams:
            return None
        listener = Listener(scope, self.queue_rows)
        self.listeners.append(listener)
        STREAMS.inc()
        if len(self.listeners) == 1:
            self.journal.follow(self.publish)
        return listener

    def leave(self, listener: Listener) -> None:
        if listener in self.listeners:
            self.listeners.remove(listener)
            STREAMS.dec()
        if not self.listeners:
            self.journal.unfollow(self.publish)

    def publish(self, row: Row) -> None:
        for listener in list(self.listeners):
            if not listener.put(row):
                self.leave(listener)

    async def events(self, listener: Listener) -> AsyncIterator[bytes]:
        """The stream's body, an `exchange` event per row as the journal shows it. It ends when dropped."""
        yield b": open\n\n"
        while True:
            try:
                await asyncio.wait_for(listener.ready.wait(), KEEPALIVE_S)
            except TimeoutError:
                yield b": keepalive\n\n"
                continue
            listener.ready.clear()
            if listener.dropped or (listener.stopping and not listener.rows):
                return
            chunk: list[bytes] = []
            while listener.rows and len(chunk) < CHUNK_ROWS:
                shown = self.journal.as_json(Entry(*listener.rows.popleft()))
                chunk.append(b"event: exchange\ndata: " + orjson.dumps(shown) + b"\n\n")
            if listener.rows or listener.stopping:
                listener.ready.set()  # The rest goes in the next chunk, or the end does.
            yield b"".join(chunk)

    async def stream(self, request: Request) -> Response:
        """`GET /__mock__/ui/stream`, a text/event-stream of the exchanges recorded from now on."""
        listener = self.join(request.scope)
        if listener is None:
            return problem(503, f"The dashboard streams to at most {self.max_streams} pages at once.")
        when_stopping(request.scope, listener.stop)
        return EventStream(self, listener)


class EventStream(StreamingResponse):
    """The stream's response. Its stream leaves the broadcast however it ends, even before it began."""

    def __init__(self, broadcast: Broadcast, listener: Listener) -> None:
        headers = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
        super().__init__(broadcast.events(listener), media_type="text/event-stream", headers=headers)
        self.broadcast = broadcast
        self.listener = listener

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self.broadcast.leave(self.listener)
