"""Time to a verdict across a network: the default profile against the mock behind 100-300 ms per answer.

A staging service in another region answers in 100-300 ms; the suite's requests used to go one after
another there (about 22 minutes for the default profile). This benchmark serves the correct mock and
broken variants of it (tests/support/variants.py) each on a loopback port, puts the latency proxy
(benchmarks/latency_proxy.py) in front, and runs the default profile with one seed:

- on loopback (the reference violations),
- through the proxy with `--workers auto` (the goal: at most 3 minutes, the same violations),
- through a throttled proxy with `--workers auto`: the same delays, and 429 with `Retry-After: 1` past
  `--throttle` (4) requests in flight, as nginx `limit_conn` answers (the goal: a verdict within 400 s,
  the same violations, no run error; the progress line saying which workers `auto` chose and why),
- with `--before`, through the proxy with `--workers 1` too: requests one after another, as before
  (about 20 minutes on the correct mock alone; measured once, not in every run),
- with `--beside-schemathesis`, Schemathesis itself (`st run --workers 8`, the same spec, seed and proxy)
  right after the suite's far run on the correct mock: the ratio of the two walls, measured in one run.

With `--gateway` the suite tests the gateway's surface too (its token from the mock's realm, through the
same proxy), as issue 42 measures a far run: both surfaces, far against loopback.

    python -m benchmarks gate_speed [--variants product_without_msrp,patch_resets_other_fields]
                                    [--seed 5] [--min 0.1] [--max 0.3] [--throttle 4] [--before]
                                    [--beside-schemathesis] [--gateway]
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
from mock_server.api.security import DEV_CLIENT_ID, DEV_CLIENT_SECRET, TOKEN_PATH
from tests.support.variants import VARIANTS

PREFIX = "/shop/api/v1"
GATEWAY_PREFIX = "/customers/v1"
SPEC = Path(__file__).resolve().parent.parent / "openapi" / "openapi.yaml"
GOAL_S = 180.0
THROTTLED_GOAL_S = 400.0
DEFAULT_VARIANTS = "product_without_msrp,patch_resets_other_fields"


def suite(origin: str, seed: int, workers: str, workdir: Path, gateway: bool = False) -> dict[str, Any]:
    """One default-profile run against `origin` (its gateway too with `gateway`): wall time, exit code, the
    violations' fingerprints, the run errors, and the progress line saying which workers it chose and why."""
    reports = workdir / f"report-{time.monotonic_ns()}"
    command = [
        sys.executable, "-m", "contract_tests", "--base-url", f"{origin}{PREFIX}", "--api-key", API_KEY,
        "--seed", str(seed), "--workers", workers, "--report-dir", str(reports),
    ]  # fmt: skip
    if gateway:
        command += [
            "--gateway-url", f"{origin}{GATEWAY_PREFIX}", "--token-url", f"{origin}{TOKEN_PATH}",
            "--client-id", DEV_CLIENT_ID, "--client-secret", DEV_CLIENT_SECRET,
        ]  # fmt: skip
    started = time.perf_counter()
    done = subprocess.run(command, cwd=workdir, capture_output=True, text=True)
    wall = time.perf_counter() - started
    findings = json.loads((reports / "findings.json").read_text()) if (reports / "findings.json").exists() else {}
    found = sorted({violation["fingerprint"] for violation in findings.get("violations", [])})
    chose = [line for line in done.stdout.splitlines() if line.startswith("workers: ")]
    return {
        "workers": workers,
        "wall_s": round(wall, 1),
        "exit_code": done.returncode,
        "workers_used": findings.get("run", {}).get("workers"),
        "workers_line": chose[0] if chose else None,
        "fingerprints": found,
        "run_errors": len(findings.get("errors", [])),
        "stderr": done.stderr.strip()[-300:],
    }


def schemathesis(origin: str, seed: int, workdir: Path) -> dict[str, Any]:
    """Schemathesis' own run (`st run --workers 8`) of the spec against `origin`'s backend: wall time, exit code."""
    st = Path(sys.executable).with_name("st")
    command = [
        str(st), "run", str(SPEC), "--url", f"{origin}{PREFIX}", "-H", f"X-API-Key: {API_KEY}",
        "--workers", "8", "--seed", str(seed),
    ]  # fmt: skip
    started = time.perf_counter()
    done = subprocess.run(command, cwd=workdir, capture_output=True, text=True)
    last = done.stdout.strip().splitlines()[-1:] or [done.stderr.strip()[-300:]]
    return {"wall_s": round(time.perf_counter() - started, 1), "exit_code": done.returncode, "last_line": last[0]}


def measure(
    name: str,
    seed: int,
    low: float,
    high: float,
    throttle: int,
    before: bool,
    beside: bool = False,
    gateway: bool = False,
) -> dict[str, Any]:
    """The runs of one target (`mock` or a variant's name): loopback, far, far and throttled (unless
    `throttle` is 0), far with one worker (`before`), and Schemathesis far (`beside`); each of the suite's
    on both surfaces with `gateway`."""
    port, proxy_port, throttled_port = free_ports(3)
    serve = python_module("benchmarks.serve_variant", name, str(port))

    def proxy(listen: int, *extra: str) -> list[str]:
        return python_module(
            "benchmarks.latency_proxy", "--upstream", f"http://127.0.0.1:{port}", "--port", str(listen),
            "--min", str(low), "--max", str(high), *extra,
        )  # fmt: skip

    health = {"ready_path": "/__mock__/health"}
    with (
        running(name, serve, port=port, **health),
        running("latency proxy", proxy(proxy_port), port=proxy_port, **health),
        tempfile.TemporaryDirectory(prefix="gate-speed-") as workdir,
    ):

        def suite_on(listening: int, workers: str = "auto") -> dict[str, Any]:
            return suite(f"http://127.0.0.1:{listening}", seed, workers, Path(workdir), gateway)

        runs = {"loopback": suite_on(port), "far": suite_on(proxy_port)}
        peer = schemathesis(f"http://127.0.0.1:{proxy_port}", seed, Path(workdir)) if beside else None
        if throttle:
            limited = proxy(throttled_port, "--throttle", str(throttle))
            with running("throttled proxy", limited, port=throttled_port, **health):
                runs["far, throttled"] = suite_on(throttled_port)
        if before:
            runs["far, one worker"] = suite_on(proxy_port, "1")
    same = all(run["fingerprints"] == runs["loopback"]["fingerprints"] for run in runs.values())
    far_to_loopback = runs["far"]["wall_s"] / runs["loopback"]["wall_s"]
    print(f"  {name:28} far / loopback {far_to_loopback:.2f}", flush=True)
    for label, run in runs.items():
        print(f"  {name:28} {label:16} {run['wall_s']:7.1f} s  workers {run['workers_used']}  "
              f"exit {run['exit_code']}  {len(run['fingerprints'])} violation(s)  "
              f"{run['run_errors']} run error(s)", flush=True)  # fmt: skip
        if label != "loopback":
            print(f"  {'':28} {'':16} {run['workers_line']}", flush=True)
    if peer is None:
        return {"target": name, "runs": runs, "same_violations": same, "far_to_loopback": far_to_loopback}
    ratio = runs["far"]["wall_s"] / peer["wall_s"]
    print(f"  {name:28} {'schemathesis':16} {peer['wall_s']:7.1f} s  workers 8  exit {peer['exit_code']}  "
          f"suite/schemathesis {ratio:.2f}  ({peer['last_line']})", flush=True)  # fmt: skip
    return {
        "target": name,
        "runs": runs,
        "same_violations": same,
        "far_to_loopback": far_to_loopback,
        "schemathesis_far": peer,
        "far_ratio": ratio,
    }


def report(results: list[dict[str, Any]]) -> str:
    header = ["target", "run", "workers", "wall (s)", "exit", "violations", "run errors", "same as loopback"]
    rows = [
        [
            result["target"], label, str(run["workers_used"]), f"{run['wall_s']:.1f}", str(run["exit_code"]),
            str(len(run["fingerprints"])), str(run["run_errors"]), "" if label == "loopback" else str(
                run["fingerprints"] == result["runs"]["loopback"]["fingerprints"]),
        ]
        for result in results
        for label, run in result["runs"].items()
    ]  # fmt: skip
    return record.table(header, rows)


def variant_names(text: str) -> list[str]:
    """`--variants`: names of tests/support/variants.py, comma-separated; "" for none."""
    names = [name for name in text.split(",") if name]
    known = {variant.name for variant in VARIANTS}
    if unknown := [name for name in names if name not in known]:
        raise argparse.ArgumentTypeError(f"unknown variant {unknown[0]!r} (tests/support/variants.py)")
    return names


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks gate_speed", description=__doc__)
    parser.add_argument(
        "--variants",
        type=variant_names,
        default=DEFAULT_VARIANTS,
        help='broken variants, comma-separated (none: "")',
    )
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--min", type=options.seconds_or_none, default=0.1, dest="low")
    parser.add_argument("--max", type=options.seconds_or_none, default=0.3, dest="high")
    parser.add_argument("--throttle", type=options.count_or_none, default=4, help="requests in flight past which "
                        "the throttled proxy answers 429 (0: no throttled run)")  # fmt: skip
    parser.add_argument("--before", action="store_true", help="also one worker through the proxy (~20 min)")
    parser.add_argument("--beside-schemathesis", action="store_true", help="also `st run --workers 8` through "
                        "the proxy, on the correct mock")  # fmt: skip
    parser.add_argument("--gateway", action="store_true", help="the suite tests the gateway's surface too")
    args = parser.parse_args(argv)
    options.latency_range(parser, args.low, args.high)
    names = ["mock", *args.variants]
    results = []
    for name in names:
        mock = name == "mock"
        before, beside = args.before and mock, args.beside_schemathesis and mock
        results.append(measure(name, args.seed, args.low, args.high, args.throttle, before, beside, args.gateway))
    far = [result["runs"]["far"]["wall_s"] for result in results]
    throttled = [result["runs"]["far, throttled"] for result in results if "far, throttled" in result["runs"]]
    verdict = {
        "goal_s": GOAL_S,
        "far_within_goal": all(wall <= GOAL_S for wall in far),
        "throttled_goal_s": THROTTLED_GOAL_S,
        "throttled_within_goal": all(
            run["wall_s"] <= THROTTLED_GOAL_S and run["run_errors"] == 0 and run["exit_code"] in (0, 1)
            for run in throttled
        ),
        "same_violations": all(result["same_violations"] for result in results),
    }
    print(report(results))
    print(
        f"far runs within {GOAL_S:.0f} s: {verdict['far_within_goal']}; throttled runs within "
        f"{THROTTLED_GOAL_S:.0f} s with a verdict and no run error: {verdict['throttled_within_goal']}; "
        f"same violations: {verdict['same_violations']}"
    )
    path = record.write("gate_speed", {"machine": record.machine(), "results": results, "verdict": verdict})
    print(f"wrote {path}")
    return 0 if verdict["far_within_goal"] and verdict["throttled_within_goal"] and verdict["same_violations"] else 1
