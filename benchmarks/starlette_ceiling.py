"""The Python ceiling: a bare Starlette app answering the mock's benchmarked requests from a dict.

It does the least the same answers need (API key check, page parameters, slice, JSON; POST, PUT,
PATCH and DELETE on the dict) and nothing of the contract (no spec, no validation), so it bounds
what any Python mock can reach on this machine with the same server (uvicorn, one worker, uvloop +
httptools).

    python -m benchmarks.starlette_ceiling --port 8001
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from benchmarks import options
from benchmarks.servers import API_KEY, ROOT

PREFIX = "/shop/api/v1"


def build() -> Starlette:
    products: dict[str, dict[str, Any]] = {
        p["productcode"]: p for p in json.loads((ROOT / "fixtures" / "products.json").read_text())
    }

    def denied(request: Request) -> Response | None:
        if request.headers.get("x-api-key") != API_KEY:
            return JSONResponse({"status": 401}, status_code=401)
        return None

    async def health(request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def one(request: Request) -> Response:
        if (refusal := denied(request)) is not None:
            return refusal
        product = products.get(request.path_params["code"])
        return JSONResponse(product) if product else JSONResponse({"status": 404}, status_code=404)

    async def page(request: Request) -> Response:
        if (refusal := denied(request)) is not None:
            return refusal
        number = int(request.query_params.get("page", 1))
        size = min(int(request.query_params.get("page_size", 20)), 100)
        codes = sorted(products)
        results = [products[code] for code in codes[(number - 1) * size : number * size]]
        return JSONResponse({"count": len(codes), "next": None, "previous": None, "results": results})

    async def create(request: Request) -> Response:
        if (refusal := denied(request)) is not None:
            return refusal
        product = await request.json()
        if product["productcode"] in products:
            return JSONResponse({"status": 409}, status_code=409)
        products[product["productcode"]] = product
        return JSONResponse(product, status_code=201)

    async def replace(request: Request) -> Response:
        if (refusal := denied(request)) is not None:
            return refusal
        code = request.path_params["code"]
        if code not in products:
            return JSONResponse({"status": 404}, status_code=404)
        product = await request.json()
        if product["productcode"] != code:
            return JSONResponse({"status": 409}, status_code=409)
        products[code] = product
        return JSONResponse(product)

    async def patch(request: Request) -> Response:
        if (refusal := denied(request)) is not None:
            return refusal
        code = request.path_params["code"]
        if code not in products:
            return JSONResponse({"status": 404}, status_code=404)
        product = products[code] = {**products[code], **await request.json()}
        return JSONResponse(product)

    async def delete(request: Request) -> Response:
        if (refusal := denied(request)) is not None:
            return refusal
        if products.pop(request.path_params["code"], None) is None:
            return JSONResponse({"status": 404}, status_code=404)
        return Response(status_code=204)

    return Starlette(
        routes=[
            Route("/__mock__/health", health),
            Route(f"{PREFIX}/products/", page, methods=["GET"]),
            Route(f"{PREFIX}/products/", create, methods=["POST"]),
            Route(f"{PREFIX}/products/{{code}}/", one, methods=["GET"]),
            Route(f"{PREFIX}/products/{{code}}/", replace, methods=["PUT"]),
            Route(f"{PREFIX}/products/{{code}}/", patch, methods=["PATCH"]),
            Route(f"{PREFIX}/products/{{code}}/", delete, methods=["DELETE"]),
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=options.port, required=True)
    port = parser.parse_args().port
    uvicorn.run(build(), host="127.0.0.1", port=port, log_level="warning", access_log=False)


if __name__ == "__main__":
    main()
