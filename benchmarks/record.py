"""Where figures were taken and where they go: machine facts, and JSON under benchmarks/results/."""

from __future__ import annotations

import datetime
import json
import os
import platform
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"


def machine() -> dict[str, Any]:
    """The facts a reader needs to weigh the figures: cores, CPU model, Python, date."""
    cpu = "unknown"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    return {
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "python": platform.python_version(),
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "load_average": [round(n, 2) for n in os.getloadavg()],
    }


def write(name: str, results: dict[str, Any]) -> Path:
    """Write `results` (which carry `machine()` taken at the start) to results/NAME-<time>.json and NAME-latest.json."""
    RESULTS.mkdir(exist_ok=True)
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y%m%dT%H%M%SZ")
    document = json.dumps({"benchmark": name, **results}, indent=2)
    path = RESULTS / f"{name}-{stamp}.json"
    path.write_text(document + "\n")
    (RESULTS / f"{name}-latest.json").write_text(document + "\n")
    return path


def table(header: list[str], rows: list[list[str]]) -> str:
    """A Markdown table, as pasted into benchmarks/README.md."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)
