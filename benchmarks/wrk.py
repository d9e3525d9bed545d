"""Run wrk and read its figures: requests/s, latency percentiles, errors."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

POST_SCRIPT = Path(__file__).resolve().parent / "post.lua"
WRITES_SCRIPT = Path(__file__).resolve().parent / "writes.lua"  # PUT, PATCH, DELETE
INSTALL_HINT = "wrk is not installed: apt-get update && apt-get install -y wrk"
_UNITS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60_000.0}


class WrkMissing(RuntimeError):
    pass


@dataclass(frozen=True)
class Load:
    """What wrk measured in one run; latencies in milliseconds."""

    requests_per_s: float
    p50_ms: float
    p90_ms: float
    p99_ms: float
    requests: int
    non_2xx: int
    socket_errors: int

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def require_wrk() -> str:
    path = shutil.which("wrk")
    if path is None:
        raise WrkMissing(INSTALL_HINT)
    return path


def run(
    url: str,
    *,
    threads: int,
    connections: int,
    seconds: float,
    headers: Sequence[str] = (),
    post_tag: str | None = None,
    write: str | None = None,
) -> Load:
    """One wrk run against `url`; `post_tag` switches to the POST script (unique codes per tag), and
    with it `write` ("put", "patch" or "delete") to the other writes' script."""
    command = [require_wrk(), f"-t{threads}", f"-c{connections}", f"-d{seconds:g}s", "--latency", "--timeout", "5s"]
    for header in headers:
        command += ["-H", header]
    if post_tag is not None and write is not None:
        command += ["-s", str(WRITES_SCRIPT), url, "--", post_tag, write]
    elif post_tag is not None:
        command += ["-s", str(POST_SCRIPT), url, "--", post_tag]
    else:
        command.append(url)
    output = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    return parse(output)


def parse(output: str) -> Load:
    def number(pattern: str, default: str | None = None) -> str:
        found = re.search(pattern, output)
        if found is None:
            if default is None:
                raise ValueError(f"wrk output has no match for {pattern!r}:\n{output}")
            return default
        return found.group(1)

    def latency(percent: str) -> float:
        found = re.search(rf"^\s+{percent}%\s+([\d.]+)(us|ms|s|m)\s*$", output, re.MULTILINE)
        if found is None:
            raise ValueError(f"wrk output has no {percent}% latency:\n{output}")
        return float(found.group(1)) * _UNITS[found.group(2)]

    errors = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", output)
    return Load(
        requests_per_s=float(number(r"Requests/sec:\s+([\d.]+)")),
        p50_ms=latency("50"),
        p90_ms=latency("90"),
        p99_ms=latency("99"),
        requests=int(number(r"(\d+) requests in")),
        non_2xx=int(number(r"Non-2xx or 3xx responses: (\d+)", "0")),
        socket_errors=sum(int(n) for n in errors.groups()) if errors else 0,
    )
