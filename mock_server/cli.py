"""`python -m mock_server` or `shop-mock` serves the mock with uvicorn.

It runs one worker, or several on a shared state with `--state redis://... --workers N`.

`shop-mock contract --out FILE` writes the consumer contract of a running mock's traffic and prints
its summary. It reads the mock's `/__mock__/contract`, which control/contract.py serves.
`shop-mock generate` writes a large data set in the fixtures' format (generate.py).

Every option can also come from an environment variable, for containers. `--some-option` comes from
`SHOP_MOCK_SOME_OPTION`. The options, their checks and the `Settings` they make are
mock_server/arguments.py.

The port is bound before anything is announced. So the banner and `--port-file` give the real port,
also for `--port 0`, and a busy port is one line and exit 2. This module still imports without the
`mock` extra installed, so that `shop-mock` can say in one line what to install.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import gc
import importlib.util
import logging
import os
import socket
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mock_server.api.security import DEV_CLIENT_ID, DEV_CLIENT_SECRET, DEV_PASSWORD, DEV_USERNAME, REALM_PATH
from mock_server.arguments import DISTRIBUTION, parse_settings, version
from mock_server.http.jsonlog import log_json_lines, uvicorn_log_options
from mock_server.realm import KeyFileError, RealmFileError
from mock_server.settings import MEMORY, Settings
from mock_server.stops import Interrupted, Stops
from shop_contract.urls import shown, url_problem

if TYPE_CHECKING:
    from mock_server.app import MockApp

# The top-level modules of the `mock` extra's requirements. python-multipart installs `multipart`.
MOCK_MODULES = (
    *("connexion", "starlette", "uvicorn", "jsonschema", "jsonschema_rs", "orjson", "multipart"),
    "prometheus_client",
)
EXIT_CANNOT_RUN = 2
MAX_CONTRACT_BYTES = 256 * 1024 * 1024  # An interaction takes about 0.8 KB: 100,000 (a full journal) are 80 MB.
CONTRACT_DEADLINE_S = 120.0  # The whole answer of `shop-mock contract`'s one request.
READ_PIECE = 64 * 1024


def banner(settings: Settings, port: int, backend: str, gateway: str) -> str:
    origin = f"http://{settings.host}:{port}"
    keys = ", ".join(sorted(settings.api_keys))
    return "\n".join(
        [
            f"shop mock server {version()}",
            f"  home             {origin}/",
            f"  API (backend)    {origin}{backend}/",
            f"  API (gateway)    {origin}{gateway}/customers/   (bearer token only)",
            f"  docs (Swagger)   {origin}{backend}/ui/",
            f"  identity realm   {origin}{REALM_PATH}/.well-known/openid-configuration",
            f"  admin            {admin_line(settings, origin)}",
            f"  API key          X-API-Key: {keys}",
            f"  dev client       {DEV_CLIENT_ID} / {DEV_CLIENT_SECRET} (client_credentials)",
            f"  dev user         {DEV_USERNAME} / {DEV_PASSWORD} (password grant)",
            f"  spec             {settings.spec or 'bundled'}",
            f"  data             {settings.fixtures or 'empty'}",
            f"  state            {shown(settings.state)}, {settings.workers} worker(s)",
            "Serving until Ctrl-C.",
        ]
    )


def admin_line(settings: Settings, origin: str) -> str:
    if not settings.admin:
        return "off (--no-admin)"
    health = f"{origin}/__mock__/health"
    if settings.admin_token and settings.admin_token_generated:
        return f"{health}   (token required: Authorization: Bearer {settings.admin_token})"
    if settings.admin_token:
        return f"{health}   (token required: the one given)"
    return f"{health}   (no token: loopback only)"


def missing_mock_modules() -> list[str]:
    return [name for name in MOCK_MODULES if importlib.util.find_spec(name) is None]


def bind(host: str, port: int) -> socket.socket:
    """A listening-ready TCP socket on host:port. A busy port or an unknown host raises OSError."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    return sock


def fail(message: str) -> int:
    print(f"shop-mock: error: {message}", file=sys.stderr)
    return EXIT_CANNOT_RUN


def contract(argv: list[str]) -> int:
    """`shop-mock contract`, which Ctrl-C or SIGTERM ends in one line and exit 2 (mock_server/stops.py), its
    file whole or as it was."""
    try:
        with Stops().installed():
            return _contract(argv)
    except Interrupted as exc:
        return fail(str(exc))


def _bounded_body(answer: Any) -> bytes:
    """The body of `answer` (an http.client response), at most MAX_CONTRACT_BYTES within CONTRACT_DEADLINE_S,
    else a ValueError: `--url` may name any server, one that sends without end or a byte at a time."""
    deadline = time.monotonic() + CONTRACT_DEADLINE_S
    body = bytearray()
    while piece := answer.read1(READ_PIECE):
        body += piece
        if len(body) > MAX_CONTRACT_BYTES:
            raise ValueError(f"its answer is larger than {MAX_CONTRACT_BYTES} bytes")
        if time.monotonic() > deadline:
            raise ValueError(f"its answer took longer than {CONTRACT_DEADLINE_S:g} s")
    return bytes(body)


def _write_whole(path: Path, text: str) -> None:
    """`text` in `path` at once, a temporary renamed over it: a signal or a full disk leave the earlier file."""
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    try:
        partial.write_text(text, encoding="utf-8")
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)


def _contract(argv: list[str]) -> int:
    """`shop-mock contract --out FILE` fetches a running mock's consumer contract, writes it and says what it holds."""
    import json
    import urllib.error
    import urllib.request
    from urllib.parse import urlencode

    parser = argparse.ArgumentParser(prog="shop-mock contract", description="Record the consumer contract.")
    parser.add_argument("--out", type=Path, required=True, metavar="FILE", help="where to write the contract")
    parser.add_argument("--url", default="http://127.0.0.1:8000", help="the running mock (default: %(default)s)")
    parser.add_argument("--name", default="consumer", help="the consumer's name in the contract")
    parser.add_argument("--session", metavar="NAME", help="the traffic of this X-Mock-Session (default: none's)")
    parser.add_argument("--admin-token", metavar="TOKEN", help="the mock's --admin-token, if it has one")
    args = parser.parse_args(argv)
    if problem := url_problem(args.url):
        return fail(f"--url {problem}")
    from mock_server.control.contract import FORMAT, name_problem, summary
    from mock_server.control.mock_sessions.registry import NAME, NAME_RULE
    from mock_server.spec.quoting import quote

    if problem := name_problem(args.name):
        return fail(f"--name {problem}")
    if args.session is not None and not NAME.fullmatch(args.session):
        return fail(f"--session {quote(args.session)}: a session name is {NAME_RULE}")
    headers = {"Accept": "application/json"}
    if args.session:
        headers["X-Mock-Session"] = args.session
    if args.admin_token:
        headers["Authorization"] = f"Bearer {args.admin_token}"
    url = f"{args.url.rstrip('/')}/__mock__/contract?{urlencode({'name': args.name})}"
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=30) as answer:
            document = json.loads(_bounded_body(answer))
    except urllib.error.HTTPError as error:
        return fail(f"the mock at {args.url} answered HTTP {error.code} to GET /__mock__/contract")
    except (urllib.error.URLError, OSError, ValueError) as error:
        return fail(f"cannot read the contract from {args.url}: {getattr(error, 'reason', error)}")
    except RecursionError:
        return fail(f"cannot read the contract from {args.url}: nested too deeply")
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        return fail(f"{args.url} answered GET /__mock__/contract with something else than a consumer contract")
    try:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        _write_whole(args.out, json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    except OSError as error:
        return fail(f"cannot write {args.out}: {error.strerror or error}")
    print(summary(document))  # Each line printable: recorded traffic names fields as any client sent them.
    print(f"wrote {args.out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["contract"]:
        return contract(argv[1:])
    if argv[:1] == ["generate"]:
        from mock_server.generate import main as generate

        return generate(argv[1:])
    settings = parse_settings(argv)
    missing = missing_mock_modules()
    if missing:
        return fail(f'the mock needs its extra ({", ".join(missing)} missing): pip install "{DISTRIBUTION}[mock]"')
    if settings.workers > 1 and settings.state == MEMORY:
        return fail("--workers needs --state redis://... (each process has its own state)")
    from mock_server.shutdown import signals_as_ctrl_c

    signals_as_ctrl_c()  # From here SIGINT and SIGTERM stop the mock while it loads as while it serves.
    try:
        return _loaded_and_served(settings)
    except KeyboardInterrupt:  # Asked to stop while importing, binding or loading its data: as asked, exit 0.
        print("shop-mock: stopped before serving", file=sys.stderr)
        return 0


def _loaded_and_served(settings: Settings) -> int:
    """The mock's data loaded, then served until a stop (SIGINT or SIGTERM) or a failure to start."""
    from mock_server.app import create_app  # The mock's stack is imported only now that it is known to be there.
    from mock_server.backends import open_store
    from mock_server.replicas import serve_workers
    from mock_server.spec.schemas import load_spec, mount_points
    from mock_server.state.fixtures import FixtureError
    from mock_server.state.store import StateError
    from shop_contract.document import SpecError

    try:  # First, so that a busy port fails at once, not after loading a large data set.
        sock = bind(settings.host, settings.port)
    except OSError as error:
        return fail(f"cannot listen on {settings.host}:{settings.port}: {error.strerror or error}")
    settings = dataclasses.replace(settings, port=sock.getsockname()[1])  # The realm's issuer names it, for `--port 0`.
    try:
        if settings.workers == 1:
            app = create_app(settings)
        else:
            open_store(settings, load_spec(settings.spec))  # It seeds the shared state once, before the workers join.
    except (FixtureError, SpecError, StateError, RealmFileError, KeyFileError) as error:
        sock.close()
        return fail(str(error))
    gc.freeze()  # The data set lives as long as the process, so the collector need not walk it again.
    if settings.log_format == "json":
        log_json_lines(settings.log_level)
    else:
        logging.basicConfig(level=settings.log_level.upper(), format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("connexion").setLevel(max(logging.WARNING, logging.getLogger().level))
    # httpx's line per proxied request repeats the journal. It also quotes the backend's reason phrase, up to 100 KiB.
    logging.getLogger("httpx").setLevel(max(logging.WARNING, logging.getLogger().level))
    with sock, contextlib.suppress(KeyboardInterrupt):  # A stop asked by SIGINT or SIGTERM (mock_server.shutdown).
        if settings.workers == 1:
            return serve(app, settings, sock)
        unwritten = announce(settings, sock.getsockname()[1], *mount_points(load_spec(settings.spec)))
        if unwritten:
            return fail(unwritten)
        serve_workers(settings, sock)
    return 0


def announce(settings: Settings, port: int, backend: str, gateway: str) -> str | None:
    """The banner, and the port file, once connections to `port` are accepted, or queued for workers.

    With `--log-format json` the banner is a JSON line. Returns why the port file could not be written,
    if it could not (`arguments.unwritable` checked its place before the port was bound)."""
    if settings.log_format == "json":
        origin = f"http://{settings.host}:{port}"
        event = {"event": "serving", "origin": origin, "admin": admin_line(settings, origin)}
        logging.getLogger("shop_mock").warning("serving", extra={"event": {**event, "workers": settings.workers}})
    else:
        print(banner(settings, port, backend, gateway), flush=True)
    if settings.port_file is not None:
        try:
            settings.port_file.write_text(f"{port}\n", encoding="utf-8")
        except OSError as error:
            return f"--port-file {settings.port_file}: cannot write it: {error.strerror or error}"
    return None


def serve(app: MockApp, settings: Settings, sock: socket.socket) -> int:
    """Serve `app` on `sock` until stopped. Exit code 2 when the port file could not be written: a
    watcher waits for it, so the mock stops at once and says why."""
    import uvicorn

    from mock_server.shutdown import StoppingServer, grace_options

    port = sock.getsockname()[1]
    app.realm.make_keys()
    unwritten: list[str] = []

    class AnnouncingServer(StoppingServer):
        """Announces the mock once uvicorn accepts connections on the bound socket."""

        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets=sockets)
            if self.should_exit:
                return
            if problem := announce(settings, port, app.backend_prefix, app.gateway_prefix):
                unwritten.append(problem)
                self.should_exit = True

    from mock_server.http.limits import Limits, uvicorn_options

    config: Any = uvicorn.Config(
        app,
        log_level=settings.log_level,
        access_log=settings.access_log,
        workers=1,
        lifespan="off",
        **uvicorn_options(Limits()),
        **grace_options(settings.shutdown_timeout),
        **uvicorn_log_options(settings.log_format),
    )
    AnnouncingServer(config).run(sockets=[sock])
    return fail(unwritten[0]) if unwritten else 0
