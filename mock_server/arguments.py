"""The command line of `shop-mock` as data.

It holds the parser of the options, their checks, and the `Settings` they make (`parse_settings`).
The CLI (cli.py) and the tests read it. It imports nothing of the mock's stack, so that `shop-mock`
can say in one line what to install when that is missing.

Every option can also come from an environment variable, `--some-option` from `SHOP_MOCK_SOME_OPTION`.
The command line wins. The rule and its checks are in mock_server/environment.py.
"""

from __future__ import annotations

import argparse
import math
import os
from importlib import metadata
from pathlib import Path

from mock_server.environment import Parser
from mock_server.http.hosts import serialized_origin, split_host
from mock_server.http.jsonlog import FORMATS
from mock_server.realm.keys import default_key_file
from mock_server.realm.realm_file import MAX_LIFESPAN_S
from mock_server.settings import (
    DEFAULT_API_KEY,
    DEFAULT_FIXTURES,
    DEFAULT_REALM_FILE,
    MEMORY,
    Settings,
    is_loopback,
    new_admin_token,
)
from shop_contract.files import read_at_most
from shop_contract.urls import url_problem

LOG_LEVELS = ("critical", "error", "warning", "info", "debug")
DISTRIBUTION = "shop-contract-suite"
MAX_SHUTDOWN_S = 3600.0
MAX_JOURNAL_SIZE = 100_000  # Each entry keeps up to 4 KiB of each body: about 1 GB at most.
MIN_SESSION_TTL_S = 0.001  # Redis keeps a session's expiry in whole milliseconds.
ADMIN_OPTIONS = ("--admin-token", "--admin-token-file", "--no-admin")
MAX_TOKEN_FILE_BYTES = 64 * 1024  # A token is a header's value: a larger file is not one.


def version() -> str:
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:  # Run from a source tree that was never installed.
        return "unknown (not installed)"


def unwritable(path: Path) -> str | None:
    """Why the file at `path` cannot be written, or None.

    It is checked before the port is bound, so that a wrong `--port-file` is one line and exit 2, not a
    traceback once the mock serves (when the file is written)."""
    if path.is_dir():
        return "is a directory"
    folder = path.parent
    if not folder.is_dir():
        return f"{folder} is not a directory"
    if not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        return "not writable"
    return None


def parse_settings(argv: list[str] | None = None) -> Settings:
    """The settings of the command line and the environment. A bad option is one line and exit 2."""
    parser = options()
    args = parser.parse_with_environment(argv, os.environ)
    check(parser, args)
    return settings_of(args)


def options() -> Parser:
    """The parser of every option of `shop-mock`."""
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
        help="allowed browser origin, scheme://host[:port], repeatable (default: any origin, no credentials)",
    )
    parser.add_argument("--log-level", choices=LOG_LEVELS, default="info", help="debug also logs every request")
    parser.add_argument("--access-log", action="store_true", help="log one line per request")
    parser.add_argument(
        "--log-format",
        choices=FORMATS,
        default="text",
        help="text (default) or json: one JSON object a line, one per request and per lifecycle event",
    )
    parser.add_argument(
        "--no-metrics", action="store_true", help="count nothing for /__mock__/metrics (the request observer is off)"
    )
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
        help=f"requests the journal keeps, the last N, at most {MAX_JOURNAL_SIZE} (default: {Settings.journal_size}); "
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
    parser.add_argument(
        "--allowed-host",
        action="append",
        dest="allowed_hosts",
        metavar="HOST",
        help="a Host name (NAME, any port, or NAME:PORT) a proxy or ingress uses, admitted to the admin API "
        "beside the loopback names and the bound address, repeatable",
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
    return parser


def check(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Check what the parser cannot check alone. Each failure is one line and exit 2, by `parser.error`.

    It reads `--admin-token-file` into `args.admin_token`.
    """
    chosen = [option for option in ADMIN_OPTIONS if getattr(args, option[2:].replace("-", "_"))]
    if len(chosen) > 1:  # The group cannot see the environment's.
        parser.error(f"{chosen[0]} and {chosen[1]} exclude each other")
    if args.admin_token_file is not None:
        try:
            args.admin_token = read_at_most(args.admin_token_file, MAX_TOKEN_FILE_BYTES).decode("utf-8").strip()
        except (OSError, UnicodeDecodeError) as error:
            reason = getattr(error, "strerror", None) or error
            parser.error(f"--admin-token-file: cannot read {args.admin_token_file}: {reason}")
        if not args.admin_token:
            parser.error(f"--admin-token-file: {args.admin_token_file} is empty")
    if not 0 <= args.port <= 65535:
        parser.error(f"--port must be 0-65535, not {args.port}")
    if args.port_file is not None and (problem := unwritable(args.port_file)):
        parser.error(f"--port-file {args.port_file}: {problem}")
    for key in args.api_keys or ():
        if not (key and key == key.strip() and key.isprintable()):
            # An empty key let a request with an empty X-API-Key in; a server strips a header value's spaces.
            parser.error(f"--api-key must be printable, not empty, with no space at either end, not {key!r}")
    if args.token_ttl is not None and not 0 < args.token_ttl <= MAX_LIFESPAN_S:
        parser.error(f"--token-ttl must be 1 to {MAX_LIFESPAN_S} seconds, not {args.token_ttl}")
    if args.issuer is not None and (problem := url_problem(args.issuer)):
        parser.error(f"--issuer {problem}")
    if args.admin_token is not None and not args.admin_token.strip():
        parser.error("--admin-token must not be empty")
    if args.proxy is not None and (problem := url_problem(args.proxy)):
        parser.error(f"--proxy {problem}")
    if args.proxy_fallback and args.proxy is None:
        parser.error("--proxy-fallback needs --proxy URL")
    if args.proxy_timeout is not None and args.proxy is None:
        parser.error("--proxy-timeout needs --proxy URL")
    if args.proxy_timeout is not None and not (args.proxy_timeout > 0 and math.isfinite(args.proxy_timeout)):
        parser.error(f"--proxy-timeout must be a positive number of seconds, not {args.proxy_timeout}")
    if args.workers < 1:
        parser.error(f"--workers must be at least 1, not {args.workers}")
    if not MIN_SESSION_TTL_S <= args.session_ttl <= MAX_LIFESPAN_S:  # NaN fails it too.
        parser.error(f"--session-ttl must be {MIN_SESSION_TTL_S:g} to {MAX_LIFESPAN_S} seconds, not {args.session_ttl}")
    if not 1 <= args.journal_size <= MAX_JOURNAL_SIZE:
        parser.error(f"--journal-size must be 1 to {MAX_JOURNAL_SIZE}, not {args.journal_size}")
    if args.max_sessions < 0:
        parser.error(f"--max-sessions must be 0 (no sessions) or more, not {args.max_sessions}")
    if not 0 < args.shutdown_timeout <= MAX_SHUTDOWN_S:  # NaN fails it too.
        parser.error(
            f"--shutdown-timeout must be above 0 and at most {MAX_SHUTDOWN_S:g} seconds, not {args.shutdown_timeout}"
        )
    for origin in args.cors_origins or ():
        if origin != "*" and serialized_origin(origin) is None:
            parser.error(
                "--cors-origin must be an origin as a browser sends it, scheme://host[:port] with no path"
                f" (e.g. http://localhost:5173), null or *, not {origin!r}"
            )
    for host in args.allowed_hosts or ():
        if split_host(host) is None:
            parser.error(f"--allowed-host must be a host name or address, with an optional :PORT, not {host!r}")
    if args.replica_name is not None and not (args.replica_name.strip() and len(args.replica_name) <= 200):
        parser.error("--replica-name must be 1 to 200 characters, not blank")


def allowed_origin(text: str) -> str:
    """A checked `--cors-origin` as the CORS layer compares it: "*", or as a browser's `Origin` writes it."""
    return text if text == "*" else str(serialized_origin(text))


def settings_of(args: argparse.Namespace) -> Settings:
    """The `Settings` of checked options. An admin token is generated for a bind beyond loopback."""
    token = args.admin_token
    if token is None and not args.no_admin and not is_loopback(args.host):
        token = new_admin_token()  # The banner prints it.
    return Settings(
        host=args.host,
        port=args.port,
        port_file=args.port_file,
        spec=args.spec,
        fixtures=None if args.empty else args.fixtures,
        api_keys=frozenset(args.api_keys or [DEFAULT_API_KEY]),
        cors_origins=tuple(map(allowed_origin, args.cors_origins or ["*"])),
        log_level=args.log_level,
        access_log=(args.access_log or args.log_level == "debug") and args.log_format == "text",
        log_format=args.log_format,
        metrics=not args.no_metrics,
        token_ttl=args.token_ttl,
        validate_responses=args.validate_responses,
        issuer=args.issuer,
        realm_file=args.realm,
        realm_key=args.realm_key,
        rotate_realm_key=args.rotate_realm_key,
        admin=not args.no_admin,
        admin_token=token,
        allowed_hosts=tuple(args.allowed_hosts or ()),
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
