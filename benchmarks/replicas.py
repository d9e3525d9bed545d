"""The Redis store at 1, 2 and 4 workers next to the in-memory store at 1 worker, in one run.

Throughput: for each server in turn, on a state freshly seeded from the default fixtures, the same
three requests and wrk runs as `throughput` (GET one product, GET a page of 20, POST a product).
With `--products N` (0 leaves it out): the memory of Redis and of each worker at N products, the
seeding time, and the start-up of a replica that joins the already seeded state (spawn until
/__mock__/health answers). A redis-server of our own runs on a free loopback port throughout.

    python -m benchmarks replicas [--seconds 10] [--workers 1 2 4] [--products 1000000 [--scale-only]]
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import subprocess
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import redis

from benchmarks import options, record, scale, throughput, wrk
from benchmarks.servers import HOST, Server, free_port, mock_command, running

MEMORY = "memory, 1 worker"
TARGET_READS, TARGET_WRITES = 1.0, 0.5  # Redis at 2 workers over memory at 1: reads at least, writes within 2x


@contextlib.contextmanager
def redis_server() -> Iterator[str]:
    """A redis-server without persistence on a free loopback port; yields its URL (database 0)."""
    binary = shutil.which("redis-server")
    if binary is None:
        raise SystemExit("redis-server is not installed: apt-get install -y redis-server")
    port = free_port()
    command = [binary, "--port", str(port), "--bind", HOST, "--save", "", "--appendonly", "no"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    url = f"redis://{HOST}:{port}/0"
    try:
        for _ in range(200):
            with contextlib.suppress(redis.ConnectionError):
                redis.Redis.from_url(url).ping()
                break
            time.sleep(0.05)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)


def redis_target(url: str, port: int, workers: int, *extra: str) -> throughput.Target:
    state = ["--state", url, "--workers", str(workers), *extra]
    name = f"redis, {workers} worker{'s' if workers > 1 else ''}"
    return throughput.Target(name, mock_command(port, *state), port)


def worker_rss_mib(server: Server) -> list[float]:
    """Resident memory of each uvicorn worker (the children of the server process), or of the
    process itself when it has none."""
    children = Path(f"/proc/{server.process.pid}/task/{server.process.pid}/children").read_text().split()
    rss = []
    for pid in children or [str(server.process.pid)]:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                rss.append(round(int(line.split()[1]) / 1024, 1))
    return rss


def redis_memory_mib(url: str) -> dict[str, float]:
    info = redis.Redis.from_url(url).info("memory")
    return {"used": round(info["used_memory"] / 2**20, 1), "rss": round(info["used_memory_rss"] / 2**20, 1)}


def throughputs(url: str, workers: Sequence[int], seconds: float, warmup: float, single: float) -> dict[str, Any]:
    port = free_port()
    servers = {MEMORY: throughput.measure(throughput.Target(MEMORY, mock_command(port), port), seconds, warmup, single)}
    for count in workers:
        redis.Redis.from_url(url).flushdb()
        target = redis_target(url, port, count)
        servers[target.name] = throughput.measure(target, seconds, warmup, single)
    return servers


def ratios(servers: dict[str, Any]) -> dict[str, dict[str, float]]:
    """Each Redis server's requests/s over the in-memory store's, per request (same run)."""
    memory = servers[MEMORY]
    return {
        f"{name} / {MEMORY}": {
            endpoint: round(figures[endpoint]["c50"]["requests_per_s"] / memory[endpoint]["c50"]["requests_per_s"], 2)
            for endpoint in throughput.ENDPOINTS
        }
        for name, figures in servers.items()
        if name != MEMORY
    }


def at_scale(url: str, products: int) -> dict[str, Any]:
    """Seed N products through a 2-worker replica, then measure memory and a joining replica's start-up."""
    directory, _ = scale.dataset(products)
    redis.Redis.from_url(url).flushdb()
    port, joiner_port = free_port(), free_port()
    fixtures = ["--fixtures", str(directory)]
    seeding = redis_target(url, port, 2, *fixtures)
    with running(seeding.name, seeding.command, port=port, ready_path="/__mock__/health", timeout_s=3600) as first:
        figures: dict[str, Any] = {"products": products, "seeding_s": round(first.startup_s, 1)}
        print(f"  seeded {products} products in {first.startup_s:.1f} s", flush=True)
        figures["redis_mib"] = redis_memory_mib(url)
        figures["worker_rss_mib"] = worker_rss_mib(first)
        joins = []
        for _ in range(3):
            joiner = redis_target(url, joiner_port, 1, *fixtures)
            with running(joiner.name, joiner.command, port=joiner_port, ready_path="/__mock__/health") as second:
                joins.append(round(second.startup_s, 2))
                figures["joined_rss_mib"] = round(second.rss_mib(), 1)
        figures["join_startup_s"] = joins
    print(
        f"  Redis {figures['redis_mib']} MiB, workers {figures['worker_rss_mib']} MiB, join {joins} s",
        flush=True,
    )
    return figures


def report(servers: dict[str, Any], ratio: dict[str, dict[str, float]], big: dict[str, Any] | None) -> str:
    rows = [
        [
            name,
            *(f"{figures[e]['c50']['requests_per_s']:.0f}" for e in throughput.ENDPOINTS),
            f"{figures['get_one']['c1']['p50_ms']:.2f}",
            f"{figures['post']['c1']['p50_ms']:.2f}",
        ]
        for name, figures in servers.items()
    ]
    header = ["server", *(f"{e} req/s" for e in throughput.ENDPOINTS), "get_one p50 c1 ms", "post p50 c1 ms"]
    parts = [
        record.table(header, rows),
        record.table(
            ["ratio (same run)", *throughput.ENDPOINTS], [[k, *map(str, v.values())] for k, v in ratio.items()]
        ),
    ]
    if big is not None:
        parts.append(
            f"at {big['products']} products: seeding {big['seeding_s']} s, Redis {big['redis_mib']} MiB, "
            f"workers {big['worker_rss_mib']} MiB, a joining replica starts in {big['join_startup_s']} s "
            f"({big['joined_rss_mib']} MiB)"
        )
    return "\n\n".join(parts)


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks replicas", description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=options.seconds, default=10, help="measured wrk run per request (default 10)")
    parser.add_argument(
        "--warmup", type=options.seconds_or_none, default=2, help="warm-up before each measured run (default 2)"
    )
    parser.add_argument("--single", type=options.seconds, default=5, help="one-connection run per request (default 5)")
    parser.add_argument(
        "--workers", type=options.count, nargs="+", default=[1, 2, 4], help="worker counts (default 1 2 4)"
    )
    parser.add_argument(
        "--products", type=options.count_or_none, default=0, help="also measure memory and joining at N products"
    )
    parser.add_argument("--scale-only", action="store_true", help="with --products: leave throughput out")
    args = parser.parse_args(argv)
    wrk.require_wrk()
    machine = record.machine()
    print(f"replicas: wrk -t2 -c50 -d{args.seconds:g}s and -t1 -c1 -d{args.single:g}s, one server at a time")
    with redis_server() as url:
        servers = {} if args.scale_only else throughputs(url, args.workers, args.seconds, args.warmup, args.single)
        big = at_scale(url, args.products) if args.products else None
    ratio = ratios(servers) if servers else {}
    two = f"redis, 2 workers / {MEMORY}"
    checks = {}
    if two in ratio:
        checks["Redis at 2 workers reads at least as fast as memory at 1"] = all(
            ratio[two][e] >= TARGET_READS for e in ("get_one", "get_page")
        )
        checks["Redis at 2 workers writes within 2x of memory at 1"] = ratio[two]["post"] >= TARGET_WRITES
    if big is not None:
        checks["a replica joins a seeded state in under 2 s"] = max(big["join_startup_s"]) < 2.0
    settings = {"seconds": args.seconds, "warmup": args.warmup, "single": args.single, "workers": args.workers}
    results = {"settings": settings, "servers": servers, "ratios": ratio, "scale": big, "targets": checks}
    path = record.write("replicas", {"machine": machine, **results})
    print(report(servers, ratio, big))
    print("\n".join(f"- {'met' if ok else 'NOT met'}: {name}" for name, ok in checks.items()))
    print(f"wrote {path}")
    return 0
