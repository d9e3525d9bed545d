"""Throughput and latency of the mock next to the Python ceiling and Prism, in one run.

The machine is shared and noisy, so the figures that count are the ratios between servers measured
in the same stretch of time. By default every server is started at once and, for each request (GET
one product, GET a page of 20, and the writes: POST, PUT, PATCH, DELETE), the `wrk -t2 -c50` runs
take turns between them:
`--rounds` rounds of `--seconds` each, the order rotated every round, so a burst of other work on
the machine falls on all servers alike instead of on whichever was being measured. Ratios are taken
within each round and reported as their median and range. Idle servers cost nothing but memory, so
this is the default; `--sequential` runs the servers one after another instead (the method before),
which keeps a server alone on the machine but lets a burst land on one of them only. Each request
kind begins with a warm-up of every server and ends with `wrk -t1 -c1` for the unloaded p50.

    python -m benchmarks throughput [--rounds 5] [--seconds 3] [--sequential] [--no-prism] [--baseline DIR]
                                    [--requests post,put,patch]
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import statistics
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks import options, record, wrk
from benchmarks.servers import API_KEY, CACHE, ROOT, Server, free_ports, mock_command, python_module, running

PREFIX = "/shop/api/v1"
SPEC = ROOT / "openapi" / "openapi.yaml"
PRISM_DIR = CACHE / "prism"
PRISM = PRISM_DIR / "node_modules" / ".bin" / "prism"
PRISM_PACKAGE = "@stoplight/prism-cli"
ENDPOINTS = {
    "get_one": "/products/S10_1678/",
    "get_page": "/products/?page=2&page_size=20",
    "post": "/products/",
    "put": "/products/S10_1678/",
    "patch": "/products/S10_1678/",
    "delete": "/products/",  # a POST and a DELETE alternately (writes.lua): the store stays the size it was
}
WRITES = ("post", "put", "patch", "delete")
WRITE_SHARE = 0.85  # issue 42: POST, PUT and PATCH at least this share of the ceiling's POST req/s
P99_TIMES = 2.0  # issue 42: POST's p99 at most this many times the ceiling's
MOCK, CEILING, PRISM_STATIC, PRISM_DYNAMIC, BASELINE = (
    "mock",
    "starlette (ceiling)",
    "prism static",
    "prism dynamic",
    "mock (baseline)",
)


@dataclass(frozen=True)
class Target:
    """A server to measure, listening on `port` (its own: interleaved, all run at once); `prefix` is
    where it serves the spec's paths (Prism ignores `servers`)."""

    name: str
    command: list[str]
    port: int
    prefix: str = PREFIX
    ready_path: str = "/__mock__/health"
    env: dict[str, str] = field(default_factory=dict)
    cwd: Path = ROOT


def ensure_prism() -> Path | None:
    """Prism's executable, installed into benchmarks/.cache/prism with npm on first use."""
    if PRISM.exists():
        return PRISM
    npm = shutil.which("npm")
    if npm is None:
        print("npm not found: Prism is skipped (install Node.js and npm to include it)")
        return None
    print(f"installing {PRISM_PACKAGE} into {PRISM_DIR} (once) ...", flush=True)
    PRISM_DIR.mkdir(parents=True, exist_ok=True)
    subprocess.run([npm, "install", "--prefix", str(PRISM_DIR), PRISM_PACKAGE], check=True, capture_output=True)
    return PRISM


def targets(prism: Path | None, baseline: Path | None) -> list[Target]:
    mock_port, ceiling_port, baseline_port, static_port, dynamic_port = free_ports(5)
    chosen = [
        Target(MOCK, mock_command(mock_port), mock_port),
        Target(CEILING, python_module("benchmarks.starlette_ceiling", "--port", str(ceiling_port)), ceiling_port),
    ]
    if baseline is not None:
        env = {"PYTHONPATH": str(baseline)}
        chosen.insert(1, Target(BASELINE, mock_command(baseline_port), baseline_port, env=env, cwd=baseline))
    if prism is not None:
        for name, port, flags in ((PRISM_STATIC, static_port, []), (PRISM_DYNAMIC, dynamic_port, ["-d"])):
            command = [str(prism), "mock", "-h", "127.0.0.1", "-p", str(port), "--errors=false", "-v", "silent"]
            chosen.append(Target(name, [*command, *flags, str(SPEC)], port, prefix="", ready_path=ENDPOINTS["get_one"]))
    return chosen


def start(target: Target) -> contextlib.AbstractContextManager[Server]:
    return running(
        target.name, target.command, port=target.port, ready_path=target.ready_path, env=target.env, cwd=target.cwd
    )


def load(url: str, endpoint: str, threads: int, connections: int, seconds: float, tag: str) -> wrk.Load:
    """One wrk run; writes use the run `tag` so that codes never repeat within a server's life."""
    headers = [f"X-API-Key: {API_KEY}"]
    write = endpoint in WRITES
    return wrk.run(
        url,
        threads=threads,
        connections=connections,
        seconds=seconds,
        headers=headers,
        post_tag=tag if write else None,
        write=endpoint if write and endpoint != "post" else None,
    )


def median_load(runs: Sequence[wrk.Load]) -> dict[str, Any]:
    """The median rate and latencies of a server's rounds, and the counts summed over them."""
    middle = {
        key: statistics.median(getattr(run, key) for run in runs)
        for key in ("requests_per_s", "p50_ms", "p90_ms", "p99_ms")
    }
    sums = {key: sum(getattr(run, key) for run in runs) for key in ("requests", "non_2xx", "socket_errors")}
    return middle | sums


def measure_together(
    servers: Sequence[tuple[Target, Server]],
    seconds: float,
    warmup: float,
    single: float,
    rounds: int,
    endpoints: Sequence[str] = tuple(ENDPOINTS),
) -> dict[str, dict[str, Any]]:
    """Each of `endpoints` on servers already running: a warm-up of each, then `rounds` loaded runs
    taking turns (the order rotated each round), then one run at one connection each."""
    figures: dict[str, dict[str, Any]] = {target.name: {} for target, _ in servers}
    for endpoint in endpoints:
        path = ENDPOINTS[endpoint]
        urls = {target.name: server.origin + target.prefix + path for target, server in servers}
        names = list(urls)
        for name in names:
            load(urls[name], endpoint, 2, 50, warmup, "W")
        runs: dict[str, list[wrk.Load]] = {name: [] for name in names}
        for number in range(rounds):
            turn = number % len(names)
            for name in names[turn:] + names[:turn]:
                runs[name].append(load(urls[name], endpoint, 2, 50, seconds, f"L{number}"))  # a tag per round
        for name in names:
            unloaded = load(urls[name], endpoint, 1, 1, single, "S")
            loaded = median_load(runs[name])
            figures[name][endpoint] = {
                "c50": loaded,
                "rounds": [run.as_dict() for run in runs[name]],
                "c1": unloaded.as_dict(),
            }
            print(
                f"  {name:20} {endpoint:9} {loaded['requests_per_s']:8.0f} req/s  p50 {loaded['p50_ms']:7.2f} ms"
                f"  p99 {loaded['p99_ms']:8.2f} ms  | c1 p50 {unloaded.p50_ms:5.2f} ms"
                f"  non-2xx {loaded['non_2xx'] + unloaded.non_2xx}"
                f"  rounds {[round(run.requests_per_s) for run in runs[name]]}",
                flush=True,
            )
    for target, server in servers:
        figures[target.name]["rss_mib_after"] = round(server.rss_mib(), 1)
        figures[target.name]["startup_s"] = round(server.startup_s, 3)
    return figures


def measure(
    target: Target,
    seconds: float,
    warmup: float,
    single: float,
    rounds: int = 1,
    endpoints: Sequence[str] = tuple(ENDPOINTS),
) -> dict[str, Any]:
    """Each of `endpoints` against one freshly started server, alone on the machine."""
    with start(target) as server:
        return measure_together([(target, server)], seconds, warmup, single, rounds, endpoints)[target.name]


def measure_all(
    chosen: Sequence[Target],
    sequential: bool,
    seconds: float,
    warmup: float,
    single: float,
    rounds: int,
    endpoints: Sequence[str],
) -> dict[str, dict[str, Any]]:
    """All servers at once, taking turns under load; or with `sequential`, one after another."""
    if sequential:
        return {target.name: measure(target, seconds, warmup, single, rounds, endpoints) for target in chosen}
    with contextlib.ExitStack() as stack:
        servers = [(target, stack.enter_context(start(target))) for target in chosen]
        return measure_together(servers, seconds, warmup, single, rounds, endpoints)


def measured(servers: dict[str, Any]) -> list[str]:
    """The endpoints of this run, in ENDPOINTS' order."""
    first = next(iter(servers.values()))
    return [endpoint for endpoint in ENDPOINTS if endpoint in first]


def ratios(servers: dict[str, Any]) -> dict[str, dict[str, dict[str, Any]]]:
    """The mock's requests/s over each other server's, per endpoint: one ratio per round (the two
    measured in the same stretch of time when interleaved), then their median and range."""
    result: dict[str, dict[str, dict[str, Any]]] = {}
    for other in (CEILING, PRISM_STATIC, PRISM_DYNAMIC, BASELINE):
        if other not in servers or MOCK not in servers:
            continue
        result[f"mock / {other}"] = {}
        for endpoint in measured(servers):
            pairs = zip(servers[MOCK][endpoint]["rounds"], servers[other][endpoint]["rounds"], strict=True)
            each = [round(mine["requests_per_s"] / theirs["requests_per_s"], 3) for mine, theirs in pairs]
            result[f"mock / {other}"][endpoint] = {
                "median": round(statistics.median(each), 2),
                "min": round(min(each), 2),
                "max": round(max(each), 2),
                "rounds": each,
            }
    return result


def of_ceiling_post(servers: dict[str, Any]) -> dict[str, float]:
    """Issue 42's measure of a write: the mock's req/s over the ceiling's POST req/s, round by round
    (for POST, the rounds the two ran side by side), the median of the rounds."""
    if MOCK not in servers or CEILING not in servers or "post" not in servers[CEILING]:
        return {}
    posts = [run["requests_per_s"] for run in servers[CEILING]["post"]["rounds"]]
    return {
        endpoint: round(
            statistics.median(
                run["requests_per_s"] / post for run, post in zip(servers[MOCK][endpoint]["rounds"], posts, strict=True)
            ),
            2,
        )
        for endpoint in measured(servers)
        if endpoint in WRITES
    }


def verdicts(servers: dict[str, Any], ratio: dict[str, dict[str, dict[str, Any]]]) -> dict[str, bool]:
    """The targets of the endpoints measured, on the median ratios."""
    present = measured(servers)

    def at_least(other: str, share: float, endpoints: Sequence[str]) -> bool:
        return all(ratio[f"mock / {other}"][e]["median"] >= share for e in endpoints if e in present)

    gets = [e for e in ("get_one", "get_page") if e in present]
    checks = {}
    if gets and f"mock / {CEILING}" in ratio:
        checks["GET req/s >= 0.8 x starlette ceiling"] = at_least(CEILING, 0.8, gets)  # issue 19
    if gets:
        checks["p50 at one connection < 1 ms"] = all(servers[MOCK][e]["c1"]["p50_ms"] < 1.0 for e in gets)
    if gets and f"mock / {PRISM_STATIC}" in ratio:
        checks["GET req/s >= prism static"] = at_least(PRISM_STATIC, 1.0, gets)
    if f"mock / {BASELINE}" in ratio:  # issue 19, with the baseline at d0ccfe6
        checks["GET one, GET page and POST req/s >= baseline"] = at_least(BASELINE, 1.0, (*gets, "post"))
    writes = {e: share for e, share in of_ceiling_post(servers).items() if e in ("post", "put", "patch")}
    if writes:  # issue 42
        checks[f"POST, PUT and PATCH req/s >= {WRITE_SHARE} x starlette POST"] = min(writes.values()) >= WRITE_SHARE
    if "post" in present and CEILING in servers:
        mine, theirs = (servers[name]["post"]["c50"]["p99_ms"] for name in (MOCK, CEILING))
        checks[f"POST p99 <= {P99_TIMES:g} x starlette POST p99"] = mine <= P99_TIMES * theirs
    return checks


def report(servers: dict[str, Any], ratio: dict[str, dict[str, dict[str, Any]]], checks: dict[str, bool]) -> str:
    present = measured(servers)
    rows = []
    for name, figures in servers.items():
        for endpoint in present:
            loaded, single = figures[endpoint]["c50"], figures[endpoint]["c1"]
            rows.append(
                [
                    name,
                    endpoint,
                    f"{loaded['requests_per_s']:.0f}",
                    f"{loaded['p50_ms']:.2f}",
                    f"{loaded['p99_ms']:.2f}",
                    f"{single['p50_ms']:.2f}",
                    str(loaded["non_2xx"] + single["non_2xx"]),
                ]
            )
    header = ["server", "request", "req/s (c50, median)", "p50 ms", "p99 ms", "p50 ms (c1)", "non-2xx"]
    ratio_rows = [
        [name, *(f"{v[e]['median']:.2f} ({v[e]['min']:.2f}-{v[e]['max']:.2f})" for e in present)]
        for name, v in ratio.items()
    ]
    if shares := of_ceiling_post(servers):
        ratio_rows.append([f"mock / {CEILING} post", *(f"{shares.get(e, '')}" for e in present)])
    parts = [
        record.table(header, rows),
        record.table(["req/s ratio, median of rounds (range)", *present], ratio_rows),
        "\n".join(f"- {'met' if ok else 'NOT met'}: {name}" for name, ok in checks.items()),
    ]
    return "\n\n".join(parts)


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks throughput", description=__doc__.split("\n")[0])
    parser.add_argument(
        "--rounds", type=options.count, default=5, help="measured wrk runs per request and server (default 5)"
    )
    parser.add_argument(
        "--seconds", type=options.seconds, default=3, help="length of each measured wrk run (default 3)"
    )
    parser.add_argument(
        "--warmup", type=options.seconds_or_none, default=2, help="warm-up before each request's rounds (default 2)"
    )
    parser.add_argument("--single", type=options.seconds, default=5, help="one-connection run per request (default 5)")
    parser.add_argument(
        "--sequential", action="store_true", help="one server after another, not all at once taking turns"
    )
    parser.add_argument("--no-prism", action="store_true", help="leave Prism out (no npm install)")
    parser.add_argument(
        "--requests",
        type=lambda text: text.split(","),
        default=list(ENDPOINTS),
        help=f"the requests to measure, comma-separated (default all: {','.join(ENDPOINTS)})",
    )
    parser.add_argument(
        "--baseline",
        type=options.tree,
        help="also measure the mock in DIR (a checkout: mock_server/, openapi/, fixtures/)",
    )
    args = parser.parse_args(argv)
    if unknown := sorted(set(args.requests) - set(ENDPOINTS)):
        parser.error(f"unknown request(s): {', '.join(unknown)} (known: {', '.join(ENDPOINTS)})")
    wrk.require_wrk()  # before any server starts
    machine = record.machine()
    prism = None if args.no_prism else ensure_prism()
    baseline = args.baseline.resolve() if args.baseline else None
    order = "one server after another" if args.sequential else "all servers at once, taking turns"
    print(
        f"throughput: {args.rounds} x wrk -t2 -c50 -d{args.seconds:g}s and -t1 -c1 -d{args.single:g}s, {order}",
        flush=True,
    )
    chosen = targets(prism, baseline)
    endpoints = [endpoint for endpoint in ENDPOINTS if endpoint in args.requests]
    servers = measure_all(chosen, args.sequential, args.seconds, args.warmup, args.single, args.rounds, endpoints)
    ratio = ratios(servers)
    checks = verdicts(servers, ratio)
    settings = {
        "rounds": args.rounds,
        "seconds": args.seconds,
        "warmup": args.warmup,
        "single": args.single,
        "interleaved": not args.sequential,
        "endpoints": {endpoint: ENDPOINTS[endpoint] for endpoint in endpoints},
    }
    path = record.write(
        "throughput",
        {
            "machine": machine,
            "settings": settings,
            "servers": servers,
            "ratios": ratio,
            "of_ceiling_post": of_ceiling_post(servers),
            "targets": checks,
        },
    )
    print(report(servers, ratio, checks))
    print(f"wrote {path}")
    return 0
