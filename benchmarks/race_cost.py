"""What the checks of concurrent writes (issue 36) add to a default run: the correct mock, one seed, the
default profile and `--workers auto`, without them (`--exclude-checks concurrent_*`) and with them, on
loopback and behind the latency proxy (100-300 ms per answer, benchmarks/latency_proxy.py). The goal:
under 15 % of the run.

    python -m benchmarks race_cost [--seed 11] [--min 0.1] [--max 0.3] [--rounds 1] [--no-far]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks import options, record
from benchmarks.servers import API_KEY, free_ports, python_module, running
from contract_tests.judge.domain import race_references, races

PREFIX = "/shop/api/v1"
RACES = (*races.CHECKS, *race_references.CHECKS)
GOAL = 0.15


def suite(origin: str, seed: int, workdir: Path, *extra: str) -> dict[str, Any]:
    """One default-profile run against `origin`: its wall time and exit code."""
    reports = workdir / f"report-{time.monotonic_ns()}"
    command = [
        sys.executable, "-m", "contract_tests", "--base-url", f"{origin}{PREFIX}", "--api-key", API_KEY,
        "--seed", str(seed), "--report-dir", str(reports), "--quiet", *extra,
    ]  # fmt: skip
    started = time.perf_counter()
    done = subprocess.run(command, cwd=workdir, capture_output=True, text=True)
    findings = json.loads((reports / "findings.json").read_text()) if (reports / "findings.json").exists() else {}
    return {"wall_s": time.perf_counter() - started, "exit_code": done.returncode, "run": findings.get("run", {})}


def pair(origin: str, seed: int, workdir: Path) -> tuple[float, float]:
    """Wall seconds of a run without the checks of concurrent writes, then with them."""
    before = suite(origin, seed, workdir, "--exclude-checks", *RACES)
    after = suite(origin, seed, workdir)
    if before["exit_code"] or after["exit_code"]:
        raise SystemExit(f"a run did not pass: exit {before['exit_code']} / {after['exit_code']}")
    return before["wall_s"], after["wall_s"]


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks race_cost", description=__doc__)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--min", type=options.seconds_or_none, default=0.1, dest="low")
    parser.add_argument("--max", type=options.seconds_or_none, default=0.3, dest="high")
    parser.add_argument("--rounds", type=options.count, default=1, help="before/after pairs per place")
    parser.add_argument("--no-far", action="store_true", help="loopback only")
    args = parser.parse_args(argv)
    options.latency_range(parser, args.low, args.high)
    port, proxy_port = free_ports(2)
    serve = python_module("benchmarks.serve_variant", "mock", str(port))
    proxy = python_module(
        "benchmarks.latency_proxy", "--upstream", f"http://127.0.0.1:{port}", "--port", str(proxy_port),
        "--min", str(args.low), "--max", str(args.high),
    )  # fmt: skip
    health = {"ready_path": "/__mock__/health"}
    rows = []
    with (
        running("mock", serve, port=port, **health),
        running("latency proxy", proxy, port=proxy_port, **health),
        tempfile.TemporaryDirectory(prefix="race-cost-") as workdir,
    ):
        places = [("loopback", port)] + ([] if args.no_far else [(f"{args.low}-{args.high} s", proxy_port)])
        for place, listening in places:
            for _ in range(args.rounds):
                before, after = pair(f"http://127.0.0.1:{listening}", args.seed, Path(workdir))
                share = (after - before) / after
                rows.append([place, f"{before:.1f}", f"{after:.1f}", f"{share:.0%}"])
                print(f"  {place:12} without {before:7.1f} s  with {after:7.1f} s  share {share:.0%}", flush=True)
    print(record.table(["target", "without (s)", "with (s)", "share of the run"], rows))
    return 0 if all(float(row[3].rstrip("%")) / 100 <= GOAL for row in rows) else 1
