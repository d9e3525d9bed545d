"""`python -m benchmarks NAME [options]`: run one benchmark; `--help` after NAME shows its options."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence

from benchmarks import (
    asgi,
    dashboard,
    gate_speed,
    metrics_cost,
    race_cost,
    replicas,
    scale,
    sessions,
    sharding,
    shared_control,
    suite_speed,
    throughput,
    wrk,
)

BENCHMARKS: dict[str, Callable[[Sequence[str]], int]] = {
    "throughput": throughput.main,
    "scale": scale.main,
    "suite_speed": suite_speed.main,
    "gate_speed": gate_speed.main,
    "replicas": replicas.main,
    "sessions": sessions.main,
    "sharding": sharding.main,
    "asgi": asgi.main,
    "dashboard": dashboard.main,
    "shared_control": shared_control.main,
    "metrics_cost": metrics_cost.main,
    "race_cost": race_cost.main,
}


def main(argv: Sequence[str]) -> int:
    if not argv or argv[0] not in BENCHMARKS:
        print(f"usage: python -m benchmarks {{{','.join(BENCHMARKS)}}} [options]  (see benchmarks/README.md)")
        return 2
    try:
        return BENCHMARKS[argv[0]](argv[1:])
    except wrk.WrkMissing as missing:
        print(f"{argv[0]}: {missing}")
        return 2


sys.exit(main(sys.argv[1:]))
