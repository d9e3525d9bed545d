"""What a session (X-Mock-Session) costs: a request in one next to the same request without, and the
memory of a session that changed 10 items.

Against one mock server, for GET one product and POST a product: `wrk -t2 -c50` without the header
and with it, in alternating order over several rounds (the machine is shared: the figure that counts
is the ratio within a round, whose median is reported). With `--baseline DIR` (a `git archive` of an
earlier commit) the same requests without the header also run against that mock, started in turn,
for the cost of sessions to requests that name none. Memory is measured in-process with tracemalloc:
sessions created through the registry, each changing 10 products.

    python -m benchmarks sessions [--seconds 5] [--rounds 3] [--sessions 200] [--baseline DIR]
"""

from __future__ import annotations

import argparse
import statistics
import tracemalloc
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks import options, record, wrk
from benchmarks.servers import API_KEY, free_port, mock_command, running
from mock_server.control.mock_sessions.registry import SessionRegistry
from mock_server.settings import DEFAULT_FIXTURES
from mock_server.state.fixtures import read_fixtures, record_fields
from mock_server.state.memory import MemoryStore

PREFIX = "/shop/api/v1"
ENDPOINTS = {"get_one": "/products/S10_1678/", "post": "/products/"}
SESSION_HEADER = "X-Mock-Session: bench"
CHANGED = 10


def rate(url: str, post: bool, seconds: float, tag: str, session: bool) -> float:
    headers = [f"X-API-Key: {API_KEY}", *([SESSION_HEADER] if session else [])]
    load = wrk.run(url, threads=2, connections=50, seconds=seconds, headers=headers, post_tag=tag if post else None)
    if load.non_2xx or load.socket_errors:
        raise RuntimeError(f"{url}: {load.non_2xx} non-2xx answers, {load.socket_errors} socket errors")
    return load.requests_per_s


def costs(seconds: float, rounds: int, command: list[str], port: int) -> dict[str, Any]:
    """Per endpoint: requests/s without and with a session, per round, and the median cost ratio."""
    figures: dict[str, Any] = {}
    with running("mock", command, port=port, ready_path="/__mock__/health") as server:
        for endpoint, path in ENDPOINTS.items():
            url = server.origin + PREFIX + path
            post = endpoint == "post"
            rate(url, post, 2, "W", session=False)
            rate(url, post, 2, "V", session=True)  # warms the session too: created on first use
            plain, scoped = [], []
            for number in range(rounds):
                order = (False, True) if number % 2 == 0 else (True, False)
                for session in order:
                    measured = rate(url, post, seconds, f"{'S' if session else 'P'}{number}", session)
                    (scoped if session else plain).append(measured)
            ratios = [p / s for p, s in zip(plain, scoped, strict=True)]
            figures[endpoint] = {
                "plain_rps": [round(r) for r in plain],
                "session_rps": [round(r) for r in scoped],
                "cost_ratio": round(statistics.median(ratios), 3),
            }
            print(
                f"  {endpoint:8} plain {plain}  session {scoped}  cost x{figures[endpoint]['cost_ratio']}", flush=True
            )
    return figures


def plain_rates(
    seconds: float, command: list[str], port: int, cwd: Path | None, env: dict[str, str]
) -> dict[str, float]:
    options: dict[str, Any] = {"env": env}
    if cwd is not None:
        options["cwd"] = cwd
    with running("mock", command, port=port, ready_path="/__mock__/health", **options) as server:
        result = {}
        for endpoint, path in ENDPOINTS.items():
            url = server.origin + PREFIX + path
            rate(url, endpoint == "post", 2, "W", session=False)
            result[endpoint] = rate(url, endpoint == "post", seconds, "L", session=False)
        return result


def memory(sessions: int) -> dict[str, Any]:
    """Bytes per session: one that only read, and one that changed `CHANGED` products."""
    default = MemoryStore(record_fields(), read_fixtures(DEFAULT_FIXTURES))
    registry = SessionRegistry(default.seed_store, ttl=3600, limit=2 * sessions + 1)
    registry.store("warm")  # the shared base, built once for every session
    codes = default.tables["products"].order[:CHANGED]
    result: dict[str, Any] = {"base_products": default.count("products")}
    for kind in ("read_only", f"changed_{CHANGED}"):
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        for number in range(sessions):
            store = registry.store(f"{kind}-{number}")
            store.page("products", 0, 20)
            if kind != "read_only":
                for code in codes:
                    store.update("products", code, {"productname": f"changed in {number}"})
        used = tracemalloc.get_traced_memory()[0] - before
        tracemalloc.stop()
        result[kind] = {"bytes_per_session": round(used / sessions)}
        print(f"  {kind:12} {used / sessions / 1024:6.1f} KiB per session", flush=True)
    return result


def report(results: dict[str, Any]) -> str:
    rows = [
        [
            endpoint,
            f"{statistics.median(f['plain_rps']):.0f}",
            f"{statistics.median(f['session_rps']):.0f}",
            f"{f['cost_ratio']:.2f}x",
        ]
        for endpoint, f in results["costs"].items()
    ]
    text = record.table(["request", "req/s without", "req/s in a session", "cost (median ratio)"], rows)
    memory_rows = [
        [kind, f"{f['bytes_per_session'] / 1024:.1f} KiB"]
        for kind, f in results["memory"].items()
        if kind != "base_products"
    ]
    text += "\n\n" + record.table(["session", "memory per session"], memory_rows)
    if "baseline" in results:
        base = results["baseline"]
        rows = [
            [e, f"{base['this'][e]:.0f}", f"{base['baseline'][e]:.0f}", f"{base['this'][e] / base['baseline'][e]:.2f}"]
            for e in ENDPOINTS
        ]
        text += "\n\n" + record.table(["request (no session)", "req/s this", "req/s baseline", "ratio"], rows)
    return text


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks sessions", description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=options.seconds, default=5.0, help="length of each measured wrk run")
    parser.add_argument(
        "--rounds", type=options.count, default=3, help="alternating rounds, without and with a session"
    )
    parser.add_argument("--sessions", type=options.count, default=200, help="sessions created for the memory figure")
    parser.add_argument(
        "--baseline", type=options.tree, help="an earlier commit's tree, for requests without a session"
    )
    args = parser.parse_args(argv)
    wrk.require_wrk()
    results: dict[str, Any] = {"machine": record.machine()}
    port = free_port()
    print("cost of a session:", flush=True)
    results["costs"] = costs(args.seconds, args.rounds, mock_command(port), port)
    print("memory:", flush=True)
    results["memory"] = memory(args.sessions)
    if args.baseline is not None:
        print("requests without a session, this tree and the baseline's:", flush=True)
        env = {"PYTHONPATH": str(args.baseline)}
        runs: dict[str, list[dict[str, float]]] = {"this": [], "baseline": []}
        for number in range(args.rounds):
            order = ("this", "baseline") if number % 2 == 0 else ("baseline", "this")
            for tree in order:
                cwd, tree_env = (args.baseline, env) if tree == "baseline" else (None, {})
                runs[tree].append(plain_rates(args.seconds, mock_command(port), port, cwd, tree_env))
        results["baseline"] = {
            tree: {endpoint: statistics.median(run[endpoint] for run in measured) for endpoint in ENDPOINTS}
            for tree, measured in runs.items()
        }
    path = record.write("sessions", results)
    print(report(results))
    print(f"figures: {path}")
    return 0
