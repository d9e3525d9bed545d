"""A reverse proxy that answers every request after a delay: a target "in another region", on loopback.

Each answer of the upstream is held for a delay drawn uniformly from [--min, --max] seconds (seeded), then
sent on unchanged: status, headers and body, the path and the Host header forwarded as sent (an escaped
"/" stays escaped; links the upstream builds name the proxy).
The benchmark of the suite's time to verdict runs the suite against the mock behind it.

    python -m benchmarks.latency_proxy --upstream http://127.0.0.1:8000 --port 9000 --min 0.1 --max 0.3
"""

from __future__ import annotations

import argparse
import asyncio
import random
from collections.abc import Sequence
from typing import Any

import httpx
import uvicorn

HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "content-length"}


class LatencyProxy:
    """An ASGI app forwarding to `upstream`, each answer after `low`..`high` seconds."""

    def __init__(self, upstream: str, low: float, high: float, seed: int = 1) -> None:
        self.client = httpx.AsyncClient(base_url=upstream, timeout=60.0, limits=httpx.Limits(max_connections=256))
        self.low, self.high = low, high
        self.random = random.Random(seed)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await self.client.aclose()
            await send({"type": "lifespan.shutdown.complete"})
            return
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
        delay = asyncio.sleep(self.random.uniform(self.low, self.high))
        request = self.client.build_request(scope["method"], httpx.URL(target), headers=headers, content=bytes(body))
        response, _ = await asyncio.gather(self.client.send(request), delay)
        kept = [(k, v) for k, v in response.headers.raw if k.decode("latin-1").lower() not in HOP_BY_HOP]
        kept = [(k, v) for k, v in kept if k.lower() != b"content-encoding"]  # httpx decoded the body
        await send({"type": "http.response.start", "status": response.status_code, "headers": kept})
        await send({"type": "http.response.body", "body": response.content})


def serve(upstream: str, port: int, low: float, high: float, seed: int = 1) -> None:
    app = LatencyProxy(upstream, low, high, seed)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", timeout_keep_alive=30)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.latency_proxy", description=__doc__)
    parser.add_argument("--upstream", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--min", type=float, default=0.1, dest="low")
    parser.add_argument("--max", type=float, default=0.3, dest="high")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    serve(args.upstream, args.port, args.low, args.high, args.seed)


if __name__ == "__main__":
    main()
