"""Wall time of the contract suite sharded 1, 2 and 4 ways (`--shard K/N`, then `shop-contract merge`).

For each target (the mock, and the DRF test backend of tests/support/drf with a mock as its realm)
and each N: the N shards one after another against one server (what N jobs on one runner would
cost) and side by side, each against its own server (N CI runners, each with its own instance of the
service; here all of them share this machine's cores), then the merge, whose verdict must be the
unsharded run's. Fresh servers for each N; fast profile, fixed seed, backend and gateway.

    python -m benchmarks sharding [--counts 1,2,4] [--targets mock,drf] [--profile fast] [--seed 1]
"""

from __future__ import annotations

import argparse
import contextlib
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from benchmarks import options, record
from benchmarks.servers import API_KEY, ROOT, free_port, mock_command, running
from mock_server.api.security import DEV_CLIENT_ID, DEV_CLIENT_SECRET, TOKEN_PATH


@contextlib.contextmanager
def target(name: str) -> Iterator[tuple[str, str]]:
    """(the target's origin, its realm's origin) while the block runs."""
    port = free_port()
    with running("mock", mock_command(port), port=port, ready_path="/__mock__/health") as mock:
        if name == "mock":
            yield mock.origin, mock.origin
            return
        from tests.support.drf import server as drf  # test support: imported only for this target

        with drf.serve("correct", realm_url=f"{mock.origin}/realms/shop") as origin:
            yield origin, mock.origin


def suite(origin: str, realm: str, profile: str, seed: int) -> list[str]:
    return [
        sys.executable, "-m", "contract_tests", "--quiet",
        "--base-url", f"{origin}/shop/api/v1", "--gateway-url", f"{origin}/customers/v1", "--api-key", API_KEY,
        "--token-url", realm + TOKEN_PATH, "--client-id", DEV_CLIENT_ID, "--client-secret", DEV_CLIENT_SECRET,
        "--profile", profile, "--seed", str(seed),
    ]  # fmt: skip


def shard_commands(command: list[str], count: int, reports: Path) -> list[list[str]]:
    return [[*command, "--shard", f"{k}/{count}", "--report-dir", str(reports / str(k))] for k in range(1, count + 1)]


def one_after_another(commands: list[list[str]]) -> tuple[float, list[float], list[int]]:
    started, walls, codes = time.perf_counter(), [], []
    for command in commands:
        began = time.perf_counter()
        codes.append(subprocess.run(command, cwd=ROOT, capture_output=True, check=False).returncode)
        walls.append(time.perf_counter() - began)
    return time.perf_counter() - started, walls, codes


def side_by_side(name: str, count: int, profile: str, seed: int, reports: Path) -> tuple[float, list[int]]:
    """The N shards at once, each against its own instance (shards sharing one instance see each other's
    writes: a list read on both surfaces may change between the two reads)."""
    with contextlib.ExitStack() as stack:
        targets = [stack.enter_context(target(name)) for _ in range(count)]
        commands = [
            shard_commands(suite(origin, realm, profile, seed), count, reports)[k]
            for k, (origin, realm) in enumerate(targets)
        ]
        started = time.perf_counter()
        processes = [
            subprocess.Popen(c, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for c in commands
        ]
        codes = [process.wait() for process in processes]
        return time.perf_counter() - started, codes


def merged(reports: Path, count: int) -> int:
    directories = [str(reports / str(k)) for k in range(1, count + 1)]  # as shard_commands names them
    command = [sys.executable, "-m", "contract_tests", "merge", *directories, "--report-dir", str(reports / "merged")]
    return subprocess.run(command, cwd=ROOT, capture_output=True, check=False).returncode


def measure(name: str, count: int, profile: str, seed: int) -> dict[str, Any]:
    with target(name) as (origin, realm), tempfile.TemporaryDirectory(prefix="sharding-") as workdir:
        command = suite(origin, realm, profile, seed)
        began = time.perf_counter()
        unsharded = subprocess.run(command, cwd=ROOT, capture_output=True, check=False).returncode
        unsharded_s = time.perf_counter() - began
        serial_s, shard_s, serial_codes = one_after_another(shard_commands(command, count, Path(workdir) / "serial"))
    with tempfile.TemporaryDirectory(prefix="sharding-") as workdir:
        parallel_s, parallel_codes = side_by_side(name, count, profile, seed, Path(workdir))
        merge_code = merged(Path(workdir), count)
    row = {
        "target": name,
        "shards": count,
        "unsharded_s": round(unsharded_s, 1),
        "unsharded_exit": unsharded,
        "one_after_another_s": round(serial_s, 1),
        "each_shard_s": [round(s, 1) for s in shard_s],
        "side_by_side_s": round(parallel_s, 1),
        "shard_exits": {"one_after_another": serial_codes, "side_by_side": parallel_codes},
        "merged_exit": merge_code,
    }
    print(
        f"  {name:5} N={count}: unsharded {unsharded_s:5.1f} s (exit {unsharded}), one after another "
        f"{serial_s:5.1f} s (slowest shard {max(shard_s):.1f} s), side by side {parallel_s:5.1f} s, merged exit "
        f"{merge_code}",
        flush=True,
    )
    return row


def report(rows: list[dict[str, Any]]) -> str:
    header = ["target", "N", "unsharded (s)", "shards one after another (s)", "slowest shard (s)", "side by side (s)"]
    header += ["exit: unsharded / merged"]
    return record.table(
        header,
        [
            [
                r["target"],
                str(r["shards"]),
                f"{r['unsharded_s']:.1f}",
                f"{r['one_after_another_s']:.1f}",
                f"{max(r['each_shard_s']):.1f}",
                f"{r['side_by_side_s']:.1f}",
                f"{r['unsharded_exit']} / {r['merged_exit']}",
            ]
            for r in rows
        ],
    )


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks sharding", description=__doc__.split("\n")[0])
    parser.add_argument(
        "--counts",
        type=options.comma_list(options.count),
        default="1,2,4",
        help="comma-separated shard counts (default: 1,2,4)",
    )
    parser.add_argument(
        "--targets",
        type=options.comma_list(options.one_of("mock", "drf")),
        default="mock,drf",
        help="comma-separated: mock, drf (default: both)",
    )
    parser.add_argument("--profile", choices=("default", "fast"), default="fast")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    machine = record.machine()
    rows = [measure(name, count, args.profile, args.seed) for name in args.targets for count in args.counts]
    checks = {
        f"{r['target']}, {r['shards']} shard(s): merged verdict = unsharded": r["merged_exit"] == r["unsharded_exit"]
        for r in rows
    }
    path = record.write(
        "sharding", {"machine": machine, "profile": args.profile, "seed": args.seed, "runs": rows, "targets": checks}
    )
    print(report(rows))
    print("\n".join(f"- {'met' if ok else 'NOT met'}: {name}" for name, ok in checks.items()))
    print(f"wrote {path}")
    return 0
