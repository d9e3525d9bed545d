"""Bounds on what a client can make the server hold: request head size and count, and time.

The mock runs on uvicorn's httptools protocol, which sets no limit on a request's head. A 64 MiB
header was read to the end. A connection that never finished its request was held forever, because
`timeout_keep_alive` only runs between requests. `--h11-max-incomplete-event-size` applies to h11
only. So `bounded_protocol` returns uvicorn's httptools protocol with these bounds:

- The request head (request line and headers) is limited to `Limits.head_bytes`. Beyond it the
  client gets 431 (414 for the request line alone) and the connection is closed, after buffering at
  most one more read.
- A request has at most `Limits.header_count` header fields. Beyond that it gets 431.
- A request (head and body) not complete `Limits.request_seconds` after it began gets 408, and its
  connection is closed. So does a connection that sends nothing for that long.
- Writes go through `coalescing.CoalescingTransport`, so a response's head and body go in one write.
- When the server stops, a response that streams until its client leaves is ended (`stopping`). A
  request still unanswered at the end of the server's wait (`timeout_graceful_shutdown`) is cut
  with 503.

The bounds cost a request no call per header. A head still incomplete after a read is counted in
`data_received`, so a head spread over many reads is refused once its bytes pass the limit. A
complete head is checked once, in `on_headers_complete`. Its size is summed there only when the
reads that brought it could hold more than the limit.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any, cast

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from mock_server.http.coalescing import CoalescingTransport
from mock_server.http.stopping import stop_streaming
from mock_server.spec.errors import problem_body


@dataclass(frozen=True)
class Limits:
    head_bytes: int = 32 * 1024  # request line and headers together
    header_count: int = 100
    request_seconds: float = 30.0  # from the first byte of a request to its last
    keep_alive_seconds: float = 5.0  # an idle connection between requests (uvicorn's timeout_keep_alive)


class Refused(Exception):
    """Raised in a parser callback to stop parsing; `status` is what the client gets."""

    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


def refusal(status: int, detail: str) -> bytes:
    """A whole HTTP response, problem+json, that closes the connection."""
    body = json.dumps(problem_body(status, detail)).encode()
    head = [
        f"HTTP/1.1 {status} {HTTPStatus(status).phrase}",
        "content-type: application/problem+json",
        f"content-length: {len(body)}",
        "connection: close",
    ]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


def bounded_protocol(limits: Limits) -> type[HttpToolsProtocol]:
    """uvicorn's httptools protocol, bounded by `limits` (see the module docstring)."""
    details = {
        408: f"The request was not complete within {limits.request_seconds:g} seconds.",
        414: f"The request line is longer than {limits.head_bytes} bytes.",
        431: f"The request head is over {limits.head_bytes} bytes or {limits.header_count} header fields.",
        503: "The mock is stopping: the request was not answered within its shutdown timeout.",
    }

    max_headers, max_head = limits.header_count, limits.head_bytes

    class BoundedHttpToolsProtocol(HttpToolsProtocol):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.in_head = True  # waiting for (the rest of) a request head
            self.unparsed_bytes = 0  # bytes of the reads after the first that left this head incomplete
            self.seen_bytes = 0  # bytes of every read that left this head incomplete (with the first's)
            self.read_bytes = 0  # the read being parsed
            self.refused = 0
            self.began = False
            self.since: float | None = None  # when the request being read began (or the connection was made)
            self.deadline: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self.transport = cast(asyncio.Transport, CoalescingTransport(transport, self.loop))
            self._begin()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            if self.refused:
                return
            self.began = False
            self.read_bytes = len(data)
            super().data_received(data)
            if self.in_head and not self.refused:
                # a head still incomplete after this read: its bytes so far are buffered by the parser
                # or kept by uvicorn. Refused on the bytes of the reads after the one it began in (that
                # one may end an earlier request's body); measured when complete if, with that one,
                # the reads could hold more than the limit.
                self.seen_bytes += len(data)
                if not self.began:
                    self.unparsed_bytes += len(data)
                    if self.unparsed_bytes > max_head:
                        self.refuse(431 if self.headers else 414)

        def shutdown(self) -> None:
            """The server stops: a response that streams ends now, a request in flight is cut (503) at
            the end of the wait (before uvicorn cancels its task, which it would log as an error)."""
            cycle = self.cycle
            if cycle is not None and not cycle.response_complete:
                stop_streaming(cycle.scope)
                wait = self.config.timeout_graceful_shutdown
                if wait is not None:
                    self.loop.call_later(wait, self._cut)
            super().shutdown()

        def _cut(self) -> None:
            cycle = self.cycle
            if cycle is None or cycle.response_complete:
                return
            if cycle.response_started:  # a client reading slowly: what is left unsent is dropped
                self.transport.abort()
            else:
                self.refuse(503)

        def send_400_response(self, msg: str) -> None:
            if self.refused:  # a parser callback raised `Refused`
                self.refuse(self.refused)
            else:
                super().send_400_response(msg)

        def on_message_begin(self) -> None:
            super().on_message_begin()
            self.in_head, self.unparsed_bytes, self.seen_bytes = True, 0, 0
            self.began = True  # this read may end with the previous request's body: counted from the next
            self._begin()

        def on_headers_complete(self) -> None:
            status = self._over_limits()
            if status:
                self.refused = status
                raise Refused(status)  # the parser stops; uvicorn calls `send_400_response`
            self.in_head = False
            super().on_headers_complete()

        def _over_limits(self) -> int:
            """The status refusing a complete head over the limits, or 0."""
            if len(self.url) > max_head:
                return 414
            if len(self.headers) > max_headers:
                return 431
            if self.seen_bytes + self.read_bytes > max_head:  # the reads could hold more: measure the head
                size = len(self.url) + sum(len(name) + len(value) + 4 for name, value in self.headers)
                if size > max_head:
                    return 431
            return 0

        def on_message_complete(self) -> None:
            self.since = None  # read whole: nothing to time until the next request begins
            super().on_message_complete()

        def refuse(self, status: int) -> None:
            self.refused = status
            self._disarm()
            if not self.transport.is_closing():
                cycle = None if self.in_head else self.cycle  # a cycle left from an earlier request is done
                if cycle is None or not cycle.response_started:
                    self.transport.write(refusal(status, details[status]))
                self.transport.close()

        def _begin(self) -> None:
            """Time a request from now.

            There is one timer per connection, not one per request, because a timer set and cancelled
            for every request was a cost on the hot path. It is set when none is pending. When it
            fires, it looks at the request then being read."""
            self.since = self.loop.time()
            if self.deadline is None:
                self.deadline = self.loop.call_later(limits.request_seconds, self._expire)

        def _expire(self) -> None:
            self.deadline = None
            if self.since is None:
                return  # between requests: uvicorn's keep-alive timeout applies
            left = self.since + limits.request_seconds - self.loop.time()
            if left > 0:
                self.deadline = self.loop.call_later(left, self._expire)
            else:
                self.refuse(408)

        def _disarm(self) -> None:
            if self.deadline is not None:
                self.deadline.cancel()
                self.deadline = None

    return BoundedHttpToolsProtocol


def uvicorn_options(limits: Limits) -> dict[str, Any]:
    """The `uvicorn.Config` options that apply `limits`."""
    return {"http": bounded_protocol(limits), "timeout_keep_alive": limits.keep_alive_seconds}


DefaultProtocol = bounded_protocol(Limits())
"""The CLI's protocol, by name: worker processes get their config pickled, and a class made in a
function cannot be pickled, so `--workers` names this one (`WORKER_OPTIONS`)."""
WORKER_OPTIONS: dict[str, Any] = {
    "http": f"{__name__}:DefaultProtocol",
    "timeout_keep_alive": Limits().keep_alive_seconds,
}
