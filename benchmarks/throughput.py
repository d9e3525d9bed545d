"""Throughput and latency of the mock next to the Python ceiling and Prism, in one run.

For each server in turn (never two at once): GET one product, GET a page of 20 products and POST a
product, each with a warm-up, then `wrk -t2 -c50` for requests/s and p50/p99, then `wrk -t1 -c1`
for the unloaded p50. The machine is shared and noisy, so the figures that count are the ratios
between servers measured in the same run.

    python -m benchmarks throughput [--seconds 10] [--no-prism] [--baseline DIR]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks import record, wrk
from benchmarks.servers import API_KEY, CACHE, ROOT, free_port, mock_command, python_module, running

PREFIX = "/shop/api/v1"
SPEC = ROOT / "openapi" / "openapi.yaml"
PRISM_DIR = CACHE / "prism"
PRISM = PRISM_DIR / "node_modules" / ".bin" / "prism"
PRISM_PACKAGE = "@stoplight/prism-cli"
ENDPOINTS = {
    "get_one": "/products/S10_1678/",
    "get_page": "/products/?page=2&page_size=20",
    "post": "/products/",
}
MOCK, CEILING, PRISM_STATIC, PRISM_DYNAMIC, BASELINE = (
    "mock",
    "starlette (ceiling)",
    "prism static",
    "prism dynamic",
    "mock (baseline)",
)


@dataclass(frozen=True)
class Target:
    """A server to measure; `prefix` is where it serves the spec's paths (Prism ignores `servers`)."""

    name: str
    command: list[str]
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


def targets(port: int, prism: Path | None, baseline: Path | None) -> list[Target]:
    chosen = [
        Target(MOCK, mock_command(port)),
        Target(CEILING, python_module("benchmarks.starlette_ceiling", "--port", str(port))),
    ]
    if baseline is not None:
        chosen.insert(1, Target(BASELINE, mock_command(port), env={"PYTHONPATH": str(baseline)}, cwd=baseline))
    if prism is not None:
        prism_mock = [str(prism), "mock", "-h", "127.0.0.1", "-p", str(port), "--errors=false", "-v", "silent"]
        ready = ENDPOINTS["get_one"]
        chosen.append(Target(PRISM_STATIC, [*prism_mock, str(SPEC)], prefix="", ready_path=ready))
        chosen.append(Target(PRISM_DYNAMIC, [*prism_mock, "-d", str(SPEC)], prefix="", ready_path=ready))
    return chosen


def load(url: str, post: bool, threads: int, connections: int, seconds: float, tag: str) -> wrk.Load:
    """One wrk run; POSTs use the run `tag` so that codes never repeat within a server's life."""
    headers = [f"X-API-Key: {API_KEY}"]
    return wrk.run(
        url, threads=threads, connections=connections, seconds=seconds, headers=headers, post_tag=tag if post else None
    )


def measure(target: Target, port: int, seconds: float, warmup: float, single: float) -> dict[str, Any]:
    """Every endpoint under load and at one connection, against one freshly started server."""
    figures: dict[str, Any] = {}
    command, ready, env, cwd = target.command, target.ready_path, target.env, target.cwd
    with running(target.name, command, port=port, ready_path=ready, env=env, cwd=cwd) as server:
        for endpoint, path in ENDPOINTS.items():
            url = server.origin + target.prefix + path
            post = endpoint == "post"
            load(url, post, 2, 50, warmup, "W")
            loaded = load(url, post, 2, 50, seconds, "L")
            unloaded = load(url, post, 1, 1, single, "S")
            figures[endpoint] = {"c50": loaded.as_dict(), "c1": unloaded.as_dict()}
            print(
                f"  {target.name:20} {endpoint:9} {loaded.requests_per_s:8.0f} req/s  p50 {loaded.p50_ms:7.2f} ms"
                f"  p99 {loaded.p99_ms:8.2f} ms  | c1 p50 {unloaded.p50_ms:5.2f} ms"
                f"  non-2xx {loaded.non_2xx + unloaded.non_2xx}",
                flush=True,
            )
        figures["rss_mib_after"] = round(server.rss_mib(), 1)
        figures["startup_s"] = round(server.startup_s, 3)
    return figures


def ratios(servers: dict[str, Any]) -> dict[str, dict[str, float]]:
    """The mock's requests/s over each other server's, per endpoint (same run, so comparable)."""
    result: dict[str, dict[str, float]] = {}
    for other in (CEILING, PRISM_STATIC, PRISM_DYNAMIC, BASELINE):
        if other not in servers or MOCK not in servers:
            continue
        result[f"mock / {other}"] = {
            endpoint: round(
                servers[MOCK][endpoint]["c50"]["requests_per_s"] / servers[other][endpoint]["c50"]["requests_per_s"], 2
            )
            for endpoint in ENDPOINTS
        }
    return result


def verdicts(servers: dict[str, Any], ratio: dict[str, dict[str, float]]) -> dict[str, bool]:
    gets = ("get_one", "get_page")
    checks = {
        "GET req/s >= 0.5 x starlette ceiling": all(ratio[f"mock / {CEILING}"][e] >= 0.5 for e in gets),
        "p50 at one connection < 1 ms": all(servers[MOCK][e]["c1"]["p50_ms"] < 1.0 for e in gets),
    }
    if f"mock / {PRISM_STATIC}" in ratio:
        checks["GET req/s >= prism static"] = all(ratio[f"mock / {PRISM_STATIC}"][e] >= 1.0 for e in gets)
    return checks


def report(servers: dict[str, Any], ratio: dict[str, dict[str, float]], checks: dict[str, bool]) -> str:
    rows = []
    for name, figures in servers.items():
        for endpoint in ENDPOINTS:
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
    header = ["server", "request", "req/s (c50)", "p50 ms", "p99 ms", "p50 ms (c1)", "non-2xx"]
    ratio_rows = [[name, *(f"{values[e]:.2f}" for e in ENDPOINTS)] for name, values in ratio.items()]
    parts = [
        record.table(header, rows),
        record.table(["req/s ratio", *ENDPOINTS], ratio_rows),
        "\n".join(f"- {'met' if ok else 'NOT met'}: {name}" for name, ok in checks.items()),
    ]
    return "\n\n".join(parts)


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks throughput", description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=10, help="measured wrk run per request (default 10)")
    parser.add_argument("--warmup", type=float, default=2, help="warm-up before each measured run (default 2)")
    parser.add_argument("--single", type=float, default=5, help="one-connection run per request (default 5)")
    parser.add_argument("--no-prism", action="store_true", help="leave Prism out (no npm install)")
    parser.add_argument(
        "--baseline", type=Path, help="also measure the mock in DIR (a checkout: mock_server/, openapi/, fixtures/)"
    )
    args = parser.parse_args(argv)
    wrk.require_wrk()  # before any server starts
    machine = record.machine()
    prism = None if args.no_prism else ensure_prism()
    baseline = args.baseline.resolve() if args.baseline else None
    port = free_port()
    print(f"throughput: wrk -t2 -c50 -d{args.seconds:g}s and -t1 -c1 -d{args.single:g}s, one server at a time")
    servers = {t.name: measure(t, port, args.seconds, args.warmup, args.single) for t in targets(port, prism, baseline)}
    ratio = ratios(servers)
    checks = verdicts(servers, ratio)
    settings = {"seconds": args.seconds, "warmup": args.warmup, "single": args.single, "endpoints": ENDPOINTS}
    path = record.write(
        "throughput",
        {"machine": machine, "settings": settings, "servers": servers, "ratios": ratio, "targets": checks},
    )
    print(report(servers, ratio, checks))
    print(f"wrote {path}")
    return 0
