"""`python -m mock_server` / `shop-mock`: serve the mock with uvicorn (several workers on a shared state)."""

from __future__ import annotations

import argparse
import contextlib
import gc
import logging
import sys
from pathlib import Path

import uvicorn

from mock_server.app import BACKEND_PREFIX, GATEWAY_PREFIX, create_app
from mock_server.auth import DEV_CLIENT_ID, DEV_CLIENT_SECRET, DEV_PASSWORD, DEV_USERNAME, REALM_PATH
from mock_server.fixtures import FixtureError
from mock_server.replicas import serve_workers
from mock_server.settings import DEFAULT_API_KEY, DEFAULT_FIXTURES, MEMORY, Settings
from mock_server.state import open_store
from mock_server.store import StateError

LOG_LEVELS = ("critical", "error", "warning", "info", "debug")


def parse_settings(argv: list[str] | None = None) -> Settings:
    parser = argparse.ArgumentParser(prog="shop-mock", description="Stateful mock server of the shop API.")
    parser.add_argument("--host", default="127.0.0.1", help="interface to bind (default: 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="port (default: 8000)")
    parser.add_argument("--fixtures", type=Path, default=DEFAULT_FIXTURES, help="seed data directory")
    parser.add_argument("--empty", action="store_true", help="start with no data at all")
    parser.add_argument(
        "--api-key",
        action="append",
        dest="api_keys",
        metavar="KEY",
        help=f"accepted X-API-Key value, repeatable (default: {DEFAULT_API_KEY})",
    )
    parser.add_argument(
        "--cors-origin",
        action="append",
        dest="cors_origins",
        metavar="ORIGIN",
        help="allowed browser origin, repeatable (default: any origin, no credentials)",
    )
    parser.add_argument("--log-level", choices=LOG_LEVELS, default="info")
    parser.add_argument("--token-ttl", type=int, default=300, help="lifetime of issued tokens in seconds")
    parser.add_argument(
        "--state",
        default=MEMORY,
        metavar="URL",
        help=f"where the state lives: {MEMORY} (default, this process only) or redis://host:port/db, shared",
    )
    parser.add_argument("--workers", type=int, default=1, help="uvicorn worker processes (needs --state redis://)")
    parser.add_argument(
        "--validate-responses", action="store_true", help="self-test: answer 500 if a response breaks the spec"
    )
    args = parser.parse_args(argv)
    if not 0 <= args.port <= 65535:
        parser.error(f"--port must be 0-65535, not {args.port}")
    if args.workers < 1:
        parser.error(f"--workers must be at least 1, not {args.workers}")
    return Settings(
        host=args.host,
        port=args.port,
        fixtures=None if args.empty else args.fixtures,
        api_keys=frozenset(args.api_keys or [DEFAULT_API_KEY]),
        cors_origins=tuple(args.cors_origins or ["*"]),
        log_level=args.log_level,
        token_ttl=args.token_ttl,
        validate_responses=args.validate_responses,
        state=args.state,
        workers=args.workers,
    )


def banner(settings: Settings) -> str:
    origin = f"http://{settings.host}:{settings.port}"
    keys = ", ".join(sorted(settings.api_keys))
    return "\n".join(
        [
            "shop mock server",
            f"  API (backend)    {origin}{BACKEND_PREFIX}/",
            f"  API (gateway)    {origin}{GATEWAY_PREFIX}/customers/   (bearer token only)",
            f"  docs (Swagger)   {origin}{BACKEND_PREFIX}/ui/",
            f"  identity realm   {origin}{REALM_PATH}/.well-known/openid-configuration",
            f"  admin            {origin}/__mock__/health",
            f"  API key          X-API-Key: {keys}",
            f"  dev client       {DEV_CLIENT_ID} / {DEV_CLIENT_SECRET} (client_credentials)",
            f"  dev user         {DEV_USERNAME} / {DEV_PASSWORD} (password grant)",
            f"  data             {settings.fixtures or 'empty'}",
            "Press Ctrl-C to stop.",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    settings = parse_settings(argv)
    if settings.workers > 1 and settings.state == MEMORY:
        print("shop-mock: error: --workers needs --state redis://... (each process has its own state)", file=sys.stderr)
        return 2
    try:
        app = create_app(settings) if settings.workers == 1 else None
        if app is None:
            open_store(settings)  # seeds the shared state once, before the workers join it
    except (FixtureError, StateError) as error:
        print(f"shop-mock: error: {error}", file=sys.stderr)
        return 2
    gc.freeze()  # the data set lives as long as the process: keep the collector from walking it again
    logging.basicConfig(level=settings.log_level.upper(), format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("connexion").setLevel(logging.WARNING)
    print(banner(settings), flush=True)
    if app is None:
        serve_workers(settings)
        return 0
    config = uvicorn.Config(
        app, host=settings.host, port=settings.port, log_level=settings.log_level, access_log=False, workers=1
    )
    with contextlib.suppress(KeyboardInterrupt):  # uvicorn handles SIGINT itself; this is belt and braces
        uvicorn.Server(config).run()
    return 0
