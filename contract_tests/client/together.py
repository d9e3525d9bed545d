"""Requests sent at the same instant, which a check of concurrent writes needs to be believed.

Each request of a burst has a thread and a connection of its own. There is one client per place, kept
across tries, so that from the second try on no connection is opened after the start. A barrier
releases the threads together. Each request records, on the monotonic clock, when its first byte was
written and when the first byte of its answer came (client/bounded.py's `Exchange`).

The burst *overlapped* when every request was on the wire before the first answer arrived. Only then
could the target have served them side by side, and only such a try may judge a race. A serialising
proxy or a one-worker target answers the first before the second is sent, and the try does not count.

A wave of tries (judge/domain/racing.py) is one burst of all its tries' requests (`send_each`). Each
try's overlap is then read from its own requests alone. The tries go out `STAGGER_S` apart, each try's
own requests at the same instant. A target with fewer workers than the wave has requests (gunicorn's
two sync workers and a wave of 16) takes them in the order they arrived. Sent all at once they arrive
mixed, and two requests of one try rarely meet on the server. Measured on Django under two sync workers,
the tries staggered: a lost update in about 2 tries of 3 (1 of 30 at once), a duplicate create in about
1 of 4 (1 of 25). Some targets answer while a whole wave is arriving (client/arrival.py): the mock,
any server handling each connection on its own. Their waves go out unstaggered, as the stagger would only
add its 35 ms a wave there.

A burst is one turn of the run's pacer (client/pacing.py).
- It waits for the pacer's limit and the pauses a target asked for.
- It counts in the time budget (`--max-time`).
- A burst answered 429 or 503 is waited out and sent again, as a single request is.

Its requests themselves go out at once, past the limit, within the budget. The capacity probe sends
its requests the same way. What a burst saw is `client/burst.py`.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Sequence
from dataclasses import replace
from time import sleep

import httpx

from contract_tests.client import bounded
from contract_tests.client.bounded import Limits
from contract_tests.client.bounded_httpx import httpx_client, send_httpx
from contract_tests.client.burst import Burst, Timed

STAGGER_S = 0.005
"""Seconds between the tries of a wave: past the jitter of threads released together, small beside a
wave's round trip (8 tries, 35 ms)."""


class Together:
    """`places` connections, each with its own client, that send one request each at the same instant."""

    def __init__(self, limits: Limits, places: int, staggered: bool = True) -> None:
        self.limits = limits
        self.stagger = STAGGER_S if staggered else 0.0
        self._unheld = replace(limits, held=False)
        self._clients = [httpx_client(self._unheld) for _ in range(places)]

    def __enter__(self) -> Together:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        for client in self._clients:
            client.close()

    def send(self, requests: Sequence[httpx.Request], delays: Sequence[float] = ()) -> Burst:
        """`requests` (at most `places`) sent at once, as one turn of the pacer, each `delays` (seconds) after
        the others' release if given. It raises what a request raised (a timeout, a size past the limit,
        `BudgetSpent`), the first in the given order."""
        burst = functools.partial(self._burst, requests, delays)  # to one surface: its first request's origin
        return self.limits.paced(burst, lambda b: b.overloaded, Burst.retry_after, str(requests[0].url))

    def send_each(self, groups: Sequence[Sequence[httpx.Request]]) -> list[Burst]:
        """The requests of all `groups` as one burst (a wave of tries), each group's at the same instant and,
        if staggered, `STAGGER_S` after the group before. It answers what each group saw, each with an
        overlap of its own."""
        delays = [number * self.stagger for number, group in enumerate(groups) for _ in group]
        burst = self.send([each for group in groups for each in group], delays)
        return burst.split([len(group) for group in groups])

    def _burst(self, requests: Sequence[httpx.Request], delays: Sequence[float]) -> Burst:
        barrier = threading.Barrier(len(requests))
        results: list[Timed | BaseException | None] = [None] * len(requests)

        def one(place: int) -> None:
            client, request = self._clients[place], requests[place]
            try:
                barrier.wait()
                if delays and delays[place]:
                    sleep(delays[place])
                response = send_httpx(client, request, self._unheld)
                heard = bounded.exchange.heard_at if bounded.exchange.heard else 0.0
                results[place] = Timed(request, response, bounded.exchange.sending_at, heard or float("inf"))
            except BaseException as exc:  # Handed to the caller's thread and raised there.
                barrier.abort()
                results[place] = exc

        threads = [threading.Thread(target=one, args=(place,), daemon=True) for place in range(len(requests))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        failed = [each for each in results if isinstance(each, BaseException)]
        real = [each for each in failed if not isinstance(each, threading.BrokenBarrierError)]
        if real or failed:
            raise (real or failed)[0]
        return Burst(tuple(each for each in results if isinstance(each, Timed)))
