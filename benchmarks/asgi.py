"""In-process cost of a request through the mock's ASGI stack, next to an earlier tree's, in one run.

No server and no network, so far less noise than wrk on this shared machine: the app is called
with a fake `receive` / `send` in a loop, for GET one product, GET a page of 20, POST a new
product, PUT and PATCH of one product and DELETE of a product the POSTs created, as `throughput`
sends them. Each tree runs in a child process of its own (`PYTHONPATH`),
the trees taking turns round after round; the figure kept per tree and request is the best batch
of all rounds (the least disturbed by other work). The ratios are the baseline's time over the
mock's: requests/s of the mock over the baseline's.

    python -m benchmarks asgi --baseline DIR [--requests 2000] [--batches 5] [--rounds 3]

The child is this file run as a script (`--probe`): it imports only the standard library and the
tree's `mock_server`, so that it measures whichever tree its `PYTHONPATH` names.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import os
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks import options

PREFIX = "/shop/api/v1"
API_KEY = b"dev-api-key"  # mock_server.settings.DEFAULT_API_KEY
ONE = f"{PREFIX}/products/S10_1678/"
REQUESTS = {  # name -> method, path ("{code}": a product a POST of this process created), query
    "get_one": ("GET", ONE, b""),
    "get_page": ("GET", f"{PREFIX}/products/", b"page=2&page_size=20"),
    "post": ("POST", f"{PREFIX}/products/", b""),
    "put": ("PUT", ONE, b""),
    "patch": ("PATCH", ONE, b""),
    "delete": ("DELETE", f"{PREFIX}/products/{{code}}/", b""),
}
STATUS = {"POST": 201, "DELETE": 204}  # else 200
MOCK, BASELINE = "mock", "baseline"
PATCH_BODY = b'{"quantityinstock":11}'  # what writes.lua sends
created: list[str] = []  # the codes the POSTs created and no DELETE has removed yet


def product(code: str) -> bytes:
    """The body `post.lua` sends: a new product every time, so that every POST creates (201)."""
    return (
        f'{{"productcode":"{code}","productname":"Bench model {code}","productscale":"1:10",'
        '"productvendor":"Bench Vendor","productdescription":"Load test.","quantityinstock":10,'
        '"buyprice":"10.00","msrp":"20.00","productline":"Motorcycles"}'
    ).encode()


def request(name: str, codes: Callable[[], str]) -> tuple[str, bytes]:
    """The path and body of one request of kind `name`; a POST's code is kept for a later DELETE."""
    method, path, _ = REQUESTS[name]
    if method == "POST":
        code = codes()
        created.append(code)
        return path, product(code)
    if method == "PUT":
        return path, product("S10_1678")
    if method == "PATCH":
        return path, PATCH_BODY
    if method == "DELETE":
        if not created:
            raise RuntimeError("delete: no product left that a POST created (run the POSTs first)")
        return path.format(code=created.pop()), b""
    return path, b""


def http_scope(method: str, path: str, query: bytes, headers: list[tuple[bytes, bytes]]) -> dict[str, Any]:
    """The scope uvicorn builds for a request from wrk."""
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "server": ("127.0.0.1", 8000),
        "client": ("127.0.0.1", 40000),
        "scheme": "http",
        "method": method,
        "root_path": "",
        "path": path,
        "raw_path": path.encode(),
        "query_string": query,
        "headers": headers,
        "state": {},
    }


def receiver(body: bytes) -> Callable[[], Awaitable[dict[str, Any]]]:
    """A `receive` that gives `body` whole, then a disconnect."""
    messages = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive() -> dict[str, Any]:
        return messages.pop() if messages else {"type": "http.disconnect"}

    return receive


async def batch(app: Any, name: str, count: int, codes: Callable[[], str], settle: bool = False) -> float:
    """Seconds per request, over `count` requests of kind `name`; with `settle`, the loop runs once
    after each (what the request scheduled, such as an open dashboard's stream, is counted too)."""
    method, _, query = REQUESTS[name]
    expected = STATUS.get(method, 200)
    statuses: list[int] = []

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            statuses.append(message["status"])

    started = time.process_time()
    for _ in range(count):
        headers = [(b"host", b"127.0.0.1:8000"), (b"x-api-key", API_KEY)]
        path, body = request(name, codes)
        if body:
            headers += [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
        await app(http_scope(method, path, query, headers), receiver(body), send)
        if settle:
            await asyncio.sleep(0)
    elapsed = (time.process_time() - started) / count
    if statuses != [expected] * count:
        raise RuntimeError(f"{name}: expected {count} x {expected}, got {sorted(set(statuses))}")
    return elapsed


def probe(count: int, batches: int) -> dict[str, list[float]]:
    """The best batch, per request kind, of the `mock_server` on sys.path (a warm-up batch first)."""
    from mock_server.app import create_app  # the tree's, as PYTHONPATH says

    app = create_app()
    serial = iter(range(10**9))

    def code() -> str:
        return f"BA{os.getpid() % 1000}_{next(serial):07d}"

    async def run() -> dict[str, list[float]]:
        figures: dict[str, list[float]] = {name: [] for name in REQUESTS}
        for name in REQUESTS:
            await batch(app, name, count, code)
        for _ in range(batches):
            for name in REQUESTS:
                figures[name].append(await batch(app, name, count, code))
        return figures

    return asyncio.run(run())


def measure(tree: Path, count: int, batches: int, script: str = __file__, *extra: str) -> dict[str, list[float]]:
    """`script`'s probe (this module's by default) in a child process that imports the mock from `tree`."""
    command = [sys.executable, str(Path(script).resolve()), "--probe", str(count), str(batches), *extra]
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"probe of {tree} failed:\n{done.stderr}")
    figures: dict[str, list[float]] = json.loads(done.stdout)
    return figures


def arguments(prog: str, description: str, baseline: str, argv: Sequence[str]) -> argparse.Namespace:
    """The options of an in-process benchmark (this one, and `dashboard`): `baseline` says what tree."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("--baseline", type=options.tree, required=True, help=baseline)
    parser.add_argument("--requests", type=options.count, default=2000, help="requests per batch (default 2000)")
    parser.add_argument(
        "--batches", type=options.count, default=5, help="batches per request kind and round (default 5)"
    )
    parser.add_argument(
        "--rounds", type=options.count, default=3, help="child processes per run, taking turns (default 3)"
    )
    return parser.parse_args(argv)


def best_batches(
    runs: Mapping[str, Callable[[], dict[str, list[float]]]], rounds: int, progress: Callable[[int, Any], None]
) -> dict[str, dict[str, float]]:
    """Each run's best batch per request kind, the runs taking turns for `rounds` rounds;
    `progress(round, best so far)` after each round."""
    best: dict[str, dict[str, float]] = {run: dict.fromkeys(REQUESTS, float("inf")) for run in runs}
    for round_ in range(rounds):
        for run, probe_run in runs.items():
            for name, seconds in probe_run().items():
                best[run][name] = min(best[run][name], *seconds)
        progress(round_ + 1, best)
    return best


def main(argv: Sequence[str]) -> int:
    from benchmarks import record
    from benchmarks.servers import ROOT

    args = arguments("python -m benchmarks asgi", __doc__.split("\n")[0], "an earlier tree (git archive)", argv)
    machine = record.machine()
    trees = {MOCK: ROOT, BASELINE: args.baseline.resolve()}
    best = best_batches(
        {tree: functools.partial(measure, path, args.requests, args.batches) for tree, path in trees.items()},
        args.rounds,
        lambda done, best: print(
            f"  round {done}: " + ", ".join(f"{n} {best[MOCK][n] * 1e6:.1f} us" for n in REQUESTS), flush=True
        ),
    )
    ratio = {name: round(best[BASELINE][name] / best[MOCK][name], 2) for name in REQUESTS}
    rows = [
        [name, f"{best[MOCK][name] * 1e6:.1f}", f"{best[BASELINE][name] * 1e6:.1f}", f"{ratio[name]:.2f}"]
        for name in REQUESTS
    ]
    settings = {**vars(args), "baseline": str(args.baseline)}
    micros = {tree: {name: round(value * 1e6, 2) for name, value in figures.items()} for tree, figures in best.items()}
    path = record.write("asgi", {"machine": machine, "settings": settings, "us_per_request": micros, "ratio": ratio})
    print(record.table(["request", "mock us", "baseline us", "mock / baseline (req/s)"], rows))
    print(f"wrote {path}")
    return 0


if __name__ == "__main__" and sys.argv[1:2] == ["--probe"]:
    print(json.dumps(probe(int(sys.argv[2]), int(sys.argv[3]))))
