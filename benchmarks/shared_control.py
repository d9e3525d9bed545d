"""What the shared fault rules and stream (issue 29) cost a request of one replica in memory: next to
the tree before them, with no rule, with a rule set that the request does not match, and with that
rule and a dashboard page open.

In process, as `asgi` measures (fake `receive` / `send`, CPU time, the best batch of all rounds), the
runs take turns round after round, each in a child process of its own. Every request is followed by
one event-loop iteration (`asgi.batch(settle=True)`), so that an open page's stream runs as under a
server. The rule is a status fault on an operation none of the requests calls (`RULE`). Ratios are
requests/s, from the times of one run.

    python -m benchmarks shared_control --baseline DIR [--requests 2000] [--batches 5] [--rounds 3]

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
RULE = {"operationId": "delete_customer", "fault": "status", "status": 500}
# run -> (this tree or the baseline, a rule set, a page open)
RUNS = {
    "baseline, no rule": (False, False, False),
    "no rule": (True, False, False),
    "baseline, rule": (False, True, False),
    "rule": (True, True, False),
    "rule, page open": (True, True, True),
}


def bench_asgi() -> Any:
    """This tree's benchmarks/asgi.py, whatever tree PYTHONPATH names."""
    spec = importlib.util.spec_from_file_location("bench_asgi", HERE / "asgi.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def probe(count: int, batches: int, rule: bool, page_open: bool) -> dict[str, list[float]]:
    """The batches' seconds per request, per request kind (a warm-up batch first)."""
    from mock_server.app import create_app  # the tree's, as PYTHONPATH says

    try:
        from mock_server.control.faults.rules import parse_rules
    except ImportError:  # a baseline tree from before the faults package
        from mock_server.control.faults import parse_rules  # type: ignore[no-redef]

    asgi = bench_asgi()
    app = create_app()
    if rule:
        app.faults.replace(parse_rules([RULE], app.faults.index))
    serial = iter(range(10**9))

    def code() -> str:
        return f"BS{os.getpid() % 1000}_{next(serial):07d}"

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


def measure(tree: Path, count: int, batches: int, rule: bool, page_open: bool) -> dict[str, list[float]]:
    """This module's `probe` in a child process that imports the mock from `tree`."""
    from benchmarks import asgi

    return asgi.measure(tree, count, batches, __file__, str(int(rule)), str(int(page_open)))


def main(argv: Sequence[str]) -> int:
    from benchmarks import asgi, record
    from benchmarks.asgi import REQUESTS
    from benchmarks.servers import ROOT

    args = asgi.arguments(
        "python -m benchmarks shared_control", __doc__.split("\n")[0], "the tree before issue 29 (git archive)", argv
    )
    machine = record.machine()
    trees = {True: ROOT, False: args.baseline.resolve()}
    best = asgi.best_batches(
        {
            run: functools.partial(measure, trees[mine], args.requests, args.batches, rule, page)
            for run, (mine, rule, page) in RUNS.items()
        },
        args.rounds,
        lambda done, _: print(f"  round {done} done", flush=True),
    )
    pairs = {  # ratio name -> (reference run, measured run): requests/s of the second over the first
        "no rule / baseline": ("baseline, no rule", "no rule"),
        "rule / baseline rule": ("baseline, rule", "rule"),
        "rule / no rule": ("no rule", "rule"),
        "page open / rule": ("rule", "rule, page open"),
    }
    ratios = {
        label: {name: round(best[first][name] / best[second][name], 3) for name in REQUESTS}
        for label, (first, second) in pairs.items()
    }
    rows = [
        [name, *(f"{best[run][name] * 1e6:.1f}" for run in RUNS), *(f"{ratios[label][name]:.3f}" for label in pairs)]
        for name in REQUESTS
    ]
    micros = {run: {name: round(value * 1e6, 2) for name, value in figures.items()} for run, figures in best.items()}
    results = {
        "machine": machine,
        "settings": {**vars(args), "baseline": str(args.baseline)},
        "us_per_request": micros,
        "ratios": ratios,
    }
    path = record.write("shared_control", results)
    print(record.table(["request", *(f"{run} us" for run in RUNS), *pairs], rows))
    print("(ratios of requests/s: 1.00 is the same speed)")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__" and sys.argv[1:2] == ["--probe"]:
    print(json.dumps(probe(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1", sys.argv[5] == "1")))
