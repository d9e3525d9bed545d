"""A reverse proxy that answers every request after a delay: a target "in another region", on loopback.

Each answer of the upstream is held for a delay drawn uniformly from [--min, --max] seconds (seeded), then
sent on unchanged: status, headers and body, the path and the Host header forwarded as sent (an escaped
"/" stays escaped; links the upstream builds name the proxy).
With `--throttle N` it is a throttled target too (nginx `limit_conn`): a request arriving while N are in
flight is answered 429 with `Retry-After: 1`, after the same delay, and not sent upstream.
The benchmark of the suite's time to verdict runs the suite against the mock behind it.

    python -m benchmarks.latency_proxy --upstream http://127.0.0.1:8000 --port 9000 --min 0.1 --max 0.3
                                       [--throttle 4]
"""

from __future__ import annotations

import argparse
import asyncio
import random
from collections.abc import Sequence
from typing import Any

import httpx
import uvicorn

from benchmarks import options

HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "content-length"}


class LatencyProxy:
    """An ASGI app forwarding to `upstream`, each answer after `low`..`high` seconds; past `throttle`
    requests in flight (None: no limit), a 429 instead."""

    def __init__(self, upstream: str, low: float, high: float, seed: int = 1, throttle: int | None = None) -> None:
        self.client = httpx.AsyncClient(base_url=upstream, timeout=60.0, limits=httpx.Limits(max_connections=256))
        self.low, self.high = low, high
        self.random = random.Random(seed)
        self.throttle = throttle
        self.in_flight = 0

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await self.client.aclose()
            await send({"type": "lifespan.shutdown.complete"})
            return
        delay = asyncio.sleep(self.random.uniform(self.low, self.high))
        if self.throttle is not None and self.in_flight >= self.throttle:
            await delay
            await send({"type": "http.response.start", "status": 429, "headers": [(b"retry-after", b"1")]})
            await send({"type": "http.response.body", "body": b""})
            return
        self.in_flight += 1
        try:
            await self._forward(scope, receive, send, delay)
        finally:
            self.in_flight -= 1

    async def _forward(self, scope: dict[str, Any], receive: Any, send: Any, delay: Any) -> None:
        body = bytearray()
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        raw_path = scope.get("raw_path") or scope["path"].encode()
        target = raw_path.decode("latin-1") + (
            "?" + scope["query_string"].decode("latin-1") if scope["query_string"] else ""
        )
        # the Host header goes on as sent: the upstream builds its links (`next`) from it
        headers = [(k, v) for k, v in scope["headers"] if k.decode("latin-1").lower() not in HOP_BY_HOP]
        request = self.client.build_request(scope["method"], httpx.URL(target), headers=headers, content=bytes(body))
        response, _ = await asyncio.gather(self.client.send(request), delay)
        kept = [(k, v) for k, v in response.headers.raw if k.decode("latin-1").lower() not in HOP_BY_HOP]
        kept = [(k, v) for k, v in kept if k.lower() != b"content-encoding"]  # httpx decoded the body
        await send({"type": "http.response.start", "status": response.status_code, "headers": kept})
        await send({"type": "http.response.body", "body": response.content})


def serve(upstream: str, port: int, low: float, high: float, seed: int = 1, throttle: int | None = None) -> None:
    app = LatencyProxy(upstream, low, high, seed, throttle)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", timeout_keep_alive=30)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.latency_proxy", description=__doc__)
    parser.add_argument("--upstream", required=True)
    parser.add_argument("--port", type=options.port, required=True)
    parser.add_argument("--min", type=options.seconds_or_none, default=0.1, dest="low")
    parser.add_argument("--max", type=options.seconds_or_none, default=0.3, dest="high")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--throttle", type=options.count, help="429 to a request arriving while this many are in flight"
    )
    args = parser.parse_args(argv)
    options.latency_range(parser, args.low, args.high)
    serve(args.upstream, args.port, args.low, args.high, args.seed, args.throttle)


if __name__ == "__main__":
    main()
