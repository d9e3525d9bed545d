"""The cost of the metrics on a request: the mock with them on and off, in one process, one run.

As `asgi` does, no server and no network: each app is called in a loop with a fake `receive` and
`send`, for GET one product, GET a page of 20 and POST a new product (the plain requests the
bypass takes, which the observer counts all the same). Two apps of each, made in the order off, on,
on, off, take turns batch after batch, in that order and then in the reverse one (which app was made
or runs first moves a figure by a few per cent); the figure kept per setting and request kind is
its best batch (the least disturbed by other work on this shared machine). A batch of metrics on
ends with the snapshot a scrape takes, counted in its time. The goal: metrics on costs at most 5 %
more CPU per request.

    python -m benchmarks metrics_cost [--requests 2000] [--batches 8]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import time
from collections.abc import Sequence
from typing import Any

from benchmarks import options
from benchmarks.asgi import REQUESTS, batch

GOAL = 0.05


def run(count: int, batches: int) -> dict[str, dict[str, float]]:
    """Best seconds per request, by request kind, for `on` and `off`."""
    from mock_server.app import create_app
    from mock_server.ops.tally import TALLY
    from mock_server.settings import Settings

    apps = [(name, create_app(Settings(metrics=name == "on"))) for name in ("off", "on", "on", "off")]
    serial = itertools.count()

    def code() -> str:
        return f"MC_{next(serial):07d}"

    async def timed(name: str, app: Any, kind: str) -> float:
        per_request = await batch(app, kind, count, code)
        if name == "on":
            started = time.process_time()
            TALLY.snapshot()
            per_request += (time.process_time() - started) / count
        return per_request

    async def measure() -> dict[str, dict[str, float]]:
        best = {name: {kind: float("inf") for kind in REQUESTS} for name in ("off", "on")}
        for _, app in apps:  # a warm-up batch each
            for kind in REQUESTS:
                await batch(app, kind, count, code)
        for round_ in range(batches):
            for kind in REQUESTS:
                for name, app in apps if round_ % 2 == 0 else reversed(apps):
                    best[name][kind] = min(best[name][kind], await timed(name, app, kind))
        return best

    return asyncio.run(measure())


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks metrics_cost", description=__doc__)
    parser.add_argument("--requests", type=options.count, default=2000, help="requests per batch")
    parser.add_argument("--batches", type=options.count, default=8, help="batches per app and request kind")
    args = parser.parse_args(argv)
    best = run(args.requests, args.batches)
    print(f"{'request':10} {'off µs':>8} {'on µs':>8} {'cost':>7}")
    within = True
    for kind in REQUESTS:
        off, on = best["off"][kind], best["on"][kind]
        cost = on / off - 1
        within &= cost <= GOAL
        print(f"{kind:10} {off * 1e6:8.1f} {on * 1e6:8.1f} {cost:+7.1%}")
    print(f"goal: at most {GOAL:.0%} per request: {'met' if within else 'NOT met'}")
    return 0 if within else 1
