"""Targets that set the suite's pace, as ASGI wrappers around the mock (served by uvicorn on a loopback
port, tests/support/live.py): one that throttles, one that trickles its answers, one that sends odd
`Retry-After` values. Each logs when every request arrived, by its own clock, so that a test can say
what reached the server and when."""

from __future__ import annotations

import asyncio
import random
import time
from typing import Any

Scope = dict[str, Any]


class Logged:
    """`app`, with the arrival time (`time.monotonic()`) of every HTTP request it got."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.arrivals: list[float] = []

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            self.arrivals.append(time.monotonic())
            await self.answer(scope, receive, send)
        else:
            await self.app(scope, receive, send)

    async def answer(self, scope: Scope, receive: Any, send: Any) -> None:
        await self.app(scope, receive, send)


async def refuse(send: Any, status: int, retry_after: bytes) -> None:
    """An answer `status` with `Retry-After: retry_after`, as a throttle or a busy server sends it."""
    headers = [(b"retry-after", retry_after), (b"content-type", b"text/plain")]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": b"slow down"})


class Throttled(Logged):
    """The mock far away and throttled: every answer `low`-`high` seconds late (seeded), and a request
    arriving while `slots` are in flight answered 429 with `Retry-After: 1` (nginx `limit_conn`, a
    concurrency throttle), as late."""

    def __init__(self, app: Any, slots: int = 4, low: float = 0.1, high: float = 0.3) -> None:
        super().__init__(app)
        self.slots, self.low, self.high = slots, low, high
        self.random = random.Random(1)
        self.in_flight = self.refused = 0

    async def answer(self, scope: Scope, receive: Any, send: Any) -> None:
        delay = asyncio.sleep(self.random.uniform(self.low, self.high))
        if self.in_flight >= self.slots:
            self.refused += 1
            await delay
            await refuse(send, 429, b"1")
            return
        self.in_flight += 1
        try:
            await delay
            await self.app(scope, receive, send)
        finally:
            self.in_flight -= 1


class Trickling(Logged):
    """The mock sending every answer's body in `pieces` writes, a pause apart: the n-th answer's pause is
    `pauses[n]`, the last for every later one (a slow link, or a server trickling on purpose)."""

    def __init__(self, app: Any, pauses: list[float], pieces: int = 20) -> None:
        super().__init__(app)
        self.pauses, self.pieces = pauses, pieces

    async def answer(self, scope: Scope, receive: Any, send: Any) -> None:
        pause = self.pauses[min(len(self.arrivals), len(self.pauses)) - 1]

        async def trickle(message: dict[str, Any]) -> None:
            if message["type"] != "http.response.body":
                await send(message)
                return
            body: bytes = message.get("body", b"")
            step = max(1, len(body) // self.pieces)
            for start in range(0, len(body), step):
                await send({"type": "http.response.body", "body": body[start : start + step], "more_body": True})
                await asyncio.sleep(pause)
            if not message.get("more_body"):
                await send({"type": "http.response.body", "body": b""})

        await self.app(scope, receive, trickle)


class OddRetryAfter(Logged):
    """The mock answering every `every`-th request 429 with the next of `values` as its `Retry-After`,
    each value once; then only the mock."""

    def __init__(self, app: Any, values: list[bytes], every: int = 4) -> None:
        super().__init__(app)
        self.values, self.every = list(values), every
        self.sent: list[bytes] = []

    async def answer(self, scope: Scope, receive: Any, send: Any) -> None:
        if len(self.arrivals) % self.every == 0 and len(self.sent) < len(self.values):
            value = self.values[len(self.sent)]
            self.sent.append(value)
            await refuse(send, 429, value)
            return
        await self.app(scope, receive, send)
