"""What the dashboard costs a request: none with no page open, next to the tree before it; and with one open.

In process, as `asgi` measures (fake `receive` / `send`, CPU time, the best batch of all rounds), three
runs take turns round after round, each in a child process of its own: the baseline tree (before the
dashboard: no subscription hook in the journal), this tree with no page open, and this tree with one
page open (a stream subscribed to the journal, its events made as the page gets them, minus the
socket). Every request is followed by one event-loop iteration, in all three, so that the open
page's stream runs as it would under a server. Ratios are requests/s, from the times of one run.

    python -m benchmarks dashboard --baseline DIR [--requests 2000] [--batches 5] [--rounds 3]

The child is this file run as a script (`--probe`): it imports the standard library, the tree's
`mock_server` (PYTHONPATH) and this tree's `benchmarks/asgi.py` by its path, for its requests.
"""

from __future__ import annotations

import asyncio
import functools
import importlib.util
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
BASELINE, CLOSED, OPEN = "baseline", "no page", "page open"


def bench_asgi() -> Any:
    """This tree's benchmarks/asgi.py, whatever tree PYTHONPATH names."""
    spec = importlib.util.spec_from_file_location("bench_asgi", HERE / "asgi.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def probe(count: int, batches: int, page_open: bool) -> dict[str, list[float]]:
    """The batches' seconds per request, per request kind (a warm-up batch first)."""
    from mock_server.app import create_app  # the tree's, as PYTHONPATH says

    asgi = bench_asgi()
    app = create_app()
    serial = iter(range(10**9))

    def code() -> str:
        return f"BD{os.getpid() % 1000}_{next(serial):07d}"

    async def one_batch(name: str) -> float:
        return float(await asgi.batch(app, name, count, code, settle=True))

    async def run() -> dict[str, list[float]]:
        if page_open:
            from mock_server.control.dashboard.stream import Broadcast

            broadcast = Broadcast(app.journal)
            listener = broadcast.join({})
            assert listener is not None

            async def page() -> None:
                async for _ in broadcast.events(listener):
                    pass

            reader = asyncio.create_task(page())
        figures: dict[str, list[float]] = {name: [] for name in asgi.REQUESTS}
        for name in asgi.REQUESTS:
            await one_batch(name)
        for _ in range(batches):
            for name in asgi.REQUESTS:
                figures[name].append(await one_batch(name))
        if page_open:
            assert not listener.dropped, "the page fell behind: its stream was dropped"
            reader.cancel()
        return figures

    return asyncio.run(run())


def measure(tree: Path, count: int, batches: int, page_open: bool) -> dict[str, list[float]]:
    """This module's `probe` in a child process that imports the mock from `tree` (as asgi.measure runs its own)."""
    from benchmarks import asgi

    return asgi.measure(tree, count, batches, __file__, str(int(page_open)))


def main(argv: Sequence[str]) -> int:
    from benchmarks import asgi, record
    from benchmarks.asgi import REQUESTS
    from benchmarks.servers import ROOT

    args = asgi.arguments(
        "python -m benchmarks dashboard", __doc__.split("\n")[0], "the tree before the dashboard (git archive)", argv
    )
    machine = record.machine()
    runs = {BASELINE: (args.baseline.resolve(), False), CLOSED: (ROOT, False), OPEN: (ROOT, True)}
    best = asgi.best_batches(
        {
            run: functools.partial(measure, tree, args.requests, args.batches, page_open)
            for run, (tree, page_open) in runs.items()
        },
        args.rounds,
        lambda done, _: print(f"  round {done} done", flush=True),
    )
    closed = {name: round(best[BASELINE][name] / best[CLOSED][name], 3) for name in REQUESTS}
    opened = {name: round(best[CLOSED][name] / best[OPEN][name], 3) for name in REQUESTS}
    rows = [
        [name, *(f"{best[run][name] * 1e6:.1f}" for run in runs), f"{closed[name]:.3f}", f"{opened[name]:.3f}"]
        for name in REQUESTS
    ]
    micros = {run: {name: round(value * 1e6, 2) for name, value in figures.items()} for run, figures in best.items()}
    results = {
        "machine": machine,
        "settings": {**vars(args), "baseline": str(args.baseline)},
        "us_per_request": micros,
        "ratio_no_page_over_baseline": closed,
        "ratio_page_open_over_no_page": opened,
    }
    path = record.write("dashboard", results)
    header = ["request", "baseline us", "no page us", "page open us", "no page / baseline", "page open / no page"]
    print(record.table(header, rows))
    print("(ratios of requests/s: 1.00 is the same speed)")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__" and sys.argv[1:2] == ["--probe"]:
    print(json.dumps(probe(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1")))
