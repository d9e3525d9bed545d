"""`python -m mock_server` / `shop-mock`: serve the mock with uvicorn: one worker, or several on a
shared state (`--state redis://... --workers N`).

`shop-mock contract --out FILE` writes the consumer contract of a running mock's traffic (its
`/__mock__/contract`, control/contract.py) and prints its summary. `shop-mock generate` writes a
large data set in the fixtures' format (generate.py).

Every option can also come from an environment variable, `--some-option` from `SHOP_MOCK_SOME_OPTION`
(the command line wins; the rule and its checks: mock_server/environment.py), for containers.

The port is bound before anything is announced: the banner (and `--port-file`) give the real port,
also for `--port 0`, and a busy port is one line and exit 2. Without the `mock` extra installed,
this module still imports, so that `shop-mock` can say in one line what to install.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import gc
import importlib.util
import logging
import math
import os
import socket
import sys
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from mock_server.api.security import DEV_CLIENT_ID, DEV_CLIENT_SECRET, DEV_PASSWORD, DEV_USERNAME, REALM_PATH
from mock_server.environment import Parser
from mock_server.realm import KeyFileError, RealmFileError
from mock_server.realm.keys import default_key_file
from mock_server.settings import (
    DEFAULT_API_KEY,
    DEFAULT_FIXTURES,
    DEFAULT_REALM_FILE,
    MEMORY,
    Settings,
    is_loopback,
    new_admin_token,
)

if TYPE_CHECKING:
    from mock_server.app import MockApp

LOG_LEVELS = ("critical", "error", "warning", "info", "debug")
DISTRIBUTION = "shop-contract-suite"
# The top-level modules of the `mock` extra's requirements (python-multipart installs `multipart`).
MOCK_MODULES = ("connexion", "starlette", "uvicorn", "jsonschema", "jsonschema_rs", "orjson", "multipart")
EXIT_CANNOT_RUN = 2
MAX_SHUTDOWN_S = 3600.0


def version() -> str:
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown (not installed)"


def is_http_url(text: str) -> bool:
    url = urlsplit(text)
    return url.scheme in {"http", "https"} and bool(url.hostname) and not url.query and not url.fragment


def parse_settings(argv: list[str] | None = None) -> Settings:
    parser = Parser(prog="shop-mock", description="Stateful mock server of the shop API.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {version()}")
    parser.add_argument("--host", default="127.0.0.1", help="interface to bind (default: 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="port; 0 picks a free one (default: 8000)")
    parser.add_argument("--port-file", type=Path, metavar="FILE", help="write the bound port to FILE once serving")
    parser.add_argument("--spec", type=Path, metavar="PATH", help="serve this spec (default: the bundled one)")
    parser.add_argument(
        "--fixtures", type=Path, default=DEFAULT_FIXTURES, metavar="DIR", help="seed data (default: the bundled set)"
    )
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
    parser.add_argument("--log-level", choices=LOG_LEVELS, default="info", help="debug also logs every request")
    parser.add_argument("--access-log", action="store_true", help="log one line per request")
    parser.add_argument(
        "--token-ttl", type=int, help="lifetime of access tokens in seconds (default: the realm file's, 300)"
    )
    parser.add_argument(
        "--issuer", metavar="URL", help="the realm's fixed issuer (default: http://HOST:PORT/realms/NAME)"
    )
    parser.add_argument(
        "--realm", type=Path, default=DEFAULT_REALM_FILE, metavar="FILE", help="realm file (Keycloak realm export)"
    )
    parser.add_argument(
        "--realm-key",
        type=Path,
        default=default_key_file(),
        metavar="FILE",
        help=f"PEM file of the realm's signing keys, created if missing (default: {default_key_file()})",
    )
    parser.add_argument(
        "--rotate-realm-key", action="store_true", help="sign with a new key; the previous two still verify"
    )
    parser.add_argument(
        "--state",
        default=MEMORY,
        metavar="URL",
        help=f"where the state lives: {MEMORY} (default, this process only) or redis://host:port/db, shared",
    )
    parser.add_argument("--workers", type=int, default=1, help="uvicorn worker processes (needs --state redis://)")
    parser.add_argument(
        "--replica-name",
        metavar="NAME",
        help="this replica's name in the journal and the dashboard (default: HOST:PID of each worker)",
    )
    parser.add_argument(
        "--validate-responses", action="store_true", help="self-test: answer 500 if a response breaks the spec"
    )
    parser.add_argument(
        "--proxy", metavar="URL", help="forward the API's requests to this backend and report spec violations"
    )
    parser.add_argument(
        "--proxy-fallback",
        action="store_true",
        help="with --proxy: the mock answers what the backend does not serve",
    )
    parser.add_argument(
        "--proxy-timeout",
        type=float,
        metavar="SECONDS",
        help=f"with --proxy: the backend's whole answer within this, else 502 (default: {Settings.proxy_timeout:g})",
    )
    parser.add_argument(
        "--session-ttl",
        type=float,
        default=Settings.session_ttl,
        metavar="SECONDS",
        help=f"an idle X-Mock-Session is dropped after this long (default: {Settings.session_ttl:g})",
    )
    parser.add_argument(
        "--max-sessions",
        type=int,
        default=Settings.max_sessions,
        metavar="N",
        help=f"sessions alive at once; one more is refused with 429 (default: {Settings.max_sessions})",
    )
    parser.add_argument(
        "--journal-size",
        type=int,
        default=Settings.journal_size,
        metavar="N",
        help=f"requests the journal keeps, the last N (default: {Settings.journal_size}); "
        "a consumer contract is recorded from them (`shop-mock contract`)",
    )
    parser.add_argument(
        "--shutdown-timeout",
        type=float,
        default=Settings.shutdown_timeout,
        metavar="SECONDS",
        help="stopped (SIGINT, SIGTERM) within this; requests still running then are cut "
        f"(default: {Settings.shutdown_timeout:g}); a second signal stops at once",
    )
    admin = parser.add_mutually_exclusive_group()
    admin.add_argument(
        "--admin-token",
        metavar="TOKEN",
        help="token the admin API (/__mock__/) requires as 'Authorization: Bearer TOKEN' "
        "(default: none on a loopback bind, generated and printed on any other; a given one is never printed)",
    )
    admin.add_argument(
        "--admin-token-file", type=Path, metavar="FILE", help="read --admin-token from FILE (a secret file)"
    )
    admin.add_argument("--no-admin", action="store_true", help="turn the admin API (/__mock__/) off")
    args = parser.parse_with_environment(argv, os.environ)
    admin_options = ("--admin-token", "--admin-token-file", "--no-admin")
    chosen = [option for option in admin_options if getattr(args, option[2:].replace("-", "_"))]
    if len(chosen) > 1:  # the group cannot see the environment's
        parser.error(f"{chosen[0]} and {chosen[1]} exclude each other")
    if args.admin_token_file is not None:
        try:
            args.admin_token = args.admin_token_file.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as error:
            reason = getattr(error, "strerror", None) or error
            parser.error(f"--admin-token-file: cannot read {args.admin_token_file}: {reason}")
        if not args.admin_token:
            parser.error(f"--admin-token-file: {args.admin_token_file} is empty")
    if not 0 <= args.port <= 65535:
        parser.error(f"--port must be 0-65535, not {args.port}")
    if args.token_ttl is not None and args.token_ttl <= 0:
        parser.error(f"--token-ttl must be a positive number of seconds, not {args.token_ttl}")
    if args.issuer is not None and not is_http_url(args.issuer):
        parser.error(f"--issuer must be an http(s) URL, not {args.issuer!r}")
    if args.admin_token is not None and not args.admin_token.strip():
        parser.error("--admin-token must not be empty")
    token = args.admin_token
    if token is None and not args.no_admin and not is_loopback(args.host):
        token = new_admin_token()  # printed in the banner
    if args.proxy is not None and not is_http_url(args.proxy):
        parser.error(f"--proxy must be an http:// or https:// URL, not {args.proxy!r}")
    if args.proxy_fallback and args.proxy is None:
        parser.error("--proxy-fallback needs --proxy URL")
    if args.proxy_timeout is not None and args.proxy is None:
        parser.error("--proxy-timeout needs --proxy URL")
    if args.proxy_timeout is not None and not (args.proxy_timeout > 0 and math.isfinite(args.proxy_timeout)):
        parser.error(f"--proxy-timeout must be a positive number of seconds, not {args.proxy_timeout}")
    if args.workers < 1:
        parser.error(f"--workers must be at least 1, not {args.workers}")
    if not (args.session_ttl > 0 and math.isfinite(args.session_ttl)):
        parser.error(f"--session-ttl must be a positive number of seconds, not {args.session_ttl}")
    if args.journal_size < 1:
        parser.error(f"--journal-size must be at least 1, not {args.journal_size}")
    if args.max_sessions < 0:
        parser.error(f"--max-sessions must be 0 (no sessions) or more, not {args.max_sessions}")
    if not 0 < args.shutdown_timeout <= MAX_SHUTDOWN_S:  # NaN too
        parser.error(
            f"--shutdown-timeout must be above 0 and at most {MAX_SHUTDOWN_S:g} seconds, not {args.shutdown_timeout}"
        )
    if args.replica_name is not None and not (args.replica_name.strip() and len(args.replica_name) <= 200):
        parser.error("--replica-name must be 1 to 200 characters, not blank")
    return Settings(
        host=args.host,
        port=args.port,
        port_file=args.port_file,
        spec=args.spec,
        fixtures=None if args.empty else args.fixtures,
        api_keys=frozenset(args.api_keys or [DEFAULT_API_KEY]),
        cors_origins=tuple(args.cors_origins or ["*"]),
        log_level=args.log_level,
        access_log=args.access_log or args.log_level == "debug",
        token_ttl=args.token_ttl,
        validate_responses=args.validate_responses,
        issuer=args.issuer,
        realm_file=args.realm,
        realm_key=args.realm_key,
        rotate_realm_key=args.rotate_realm_key,
        admin=not args.no_admin,
        admin_token=token,
        admin_token_generated=token is not None and token is not args.admin_token,
        proxy=args.proxy,
        proxy_fallback=args.proxy_fallback,
        proxy_timeout=Settings.proxy_timeout if args.proxy_timeout is None else args.proxy_timeout,
        state=args.state,
        workers=args.workers,
        session_ttl=args.session_ttl,
        max_sessions=args.max_sessions,
        journal_size=args.journal_size,
        shutdown_timeout=args.shutdown_timeout,
        replica_name=args.replica_name,
    )


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
            f"  state            {settings.state}, {settings.workers} worker(s)",
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
    """A listening-ready TCP socket on host:port (raises OSError: busy port, unknown host...)."""
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
    """`shop-mock contract --out FILE`: fetch a running mock's consumer contract, write it, say what it holds."""
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
    if not is_http_url(args.url):
        return fail(f"--url must be an http(s) URL, not {args.url!r}")
    headers = {"Accept": "application/json"}
    if args.session:
        headers["X-Mock-Session"] = args.session
    if args.admin_token:
        headers["Authorization"] = f"Bearer {args.admin_token}"
    url = f"{args.url.rstrip('/')}/__mock__/contract?{urlencode({'name': args.name})}"
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=30) as answer:
            document = json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return fail(f"the mock at {args.url} answered HTTP {error.code} to GET /__mock__/contract")
    except (urllib.error.URLError, OSError, ValueError) as error:
        return fail(f"cannot read the contract from {args.url}: {getattr(error, 'reason', error)}")
    from mock_server.control.contract import FORMAT, summary

    if not isinstance(document, dict) or document.get("format") != FORMAT:
        return fail(f"{args.url} answered GET /__mock__/contract with something else than a consumer contract")
    try:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    except OSError as error:
        return fail(f"cannot write {args.out}: {error.strerror or error}")
    shown = "".join(c if c.isprintable() or c == "\n" else f"\\x{ord(c):02x}" for c in summary(document))
    print(shown)  # recorded traffic names fields as any client sent them: none acts on the terminal
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

    from mock_server.app import create_app  # the mock's stack: only now that it is known to be there
    from mock_server.backends import open_store
    from mock_server.replicas import serve_workers
    from mock_server.shutdown import exit_quietly_on_sigterm
    from mock_server.spec.schemas import load_spec, mount_points
    from mock_server.state.fixtures import FixtureError
    from mock_server.state.store import StateError
    from shop_contract.document import SpecError

    try:  # first, so that a busy port fails at once, not after loading a large data set
        sock = bind(settings.host, settings.port)
    except OSError as error:
        return fail(f"cannot listen on {settings.host}:{settings.port}: {error.strerror or error}")
    settings = dataclasses.replace(settings, port=sock.getsockname()[1])  # `--port 0`: the realm's issuer names it
    try:
        if settings.workers == 1:
            app = create_app(settings)
        else:
            open_store(settings, load_spec(settings.spec))  # seeds the shared state once, before the workers join
    except (FixtureError, SpecError, StateError, RealmFileError, KeyFileError) as error:
        sock.close()
        return fail(str(error))
    gc.freeze()  # the data set lives as long as the process: keep the collector from walking it again
    logging.basicConfig(level=settings.log_level.upper(), format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("connexion").setLevel(max(logging.WARNING, logging.getLogger().level))
    # httpx's line per proxied request repeats the journal and quotes the backend's reason phrase (up to 100 KiB)
    logging.getLogger("httpx").setLevel(max(logging.WARNING, logging.getLogger().level))
    exit_quietly_on_sigterm()
    with sock, contextlib.suppress(KeyboardInterrupt):  # a stop asked by SIGINT or SIGTERM (mock_server.shutdown)
        if settings.workers == 1:
            serve(app, settings, sock)
        else:
            announce(settings, sock.getsockname()[1], *mount_points(load_spec(settings.spec)))
            serve_workers(settings, sock)
    return 0


def announce(settings: Settings, port: int, backend: str, gateway: str) -> None:
    """The banner, and the port file: once connections to `port` are accepted (or queued, for workers)."""
    print(banner(settings, port, backend, gateway), flush=True)
    if settings.port_file is not None:
        settings.port_file.write_text(f"{port}\n", encoding="utf-8")


def serve(app: MockApp, settings: Settings, sock: socket.socket) -> None:
    import uvicorn

    from mock_server.shutdown import StoppingServer, grace_options

    port = sock.getsockname()[1]

    class AnnouncingServer(StoppingServer):
        """Announces the mock once uvicorn accepts connections on the bound socket."""

        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets=sockets)
            if self.should_exit:
                return
            announce(settings, port, app.backend_prefix, app.gateway_prefix)

    from mock_server.http.limits import Limits, uvicorn_options

    config: Any = uvicorn.Config(
        app,
        log_level=settings.log_level,
        access_log=settings.access_log,
        workers=1,
        lifespan="off",
        **uvicorn_options(Limits()),
        **grace_options(settings.shutdown_timeout),
    )
    AnnouncingServer(config).run(sockets=[sock])
