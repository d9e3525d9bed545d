"""Run the DRF backend by hand: `python -m tests.support.drf --variant NAME --realm-url URL [--port N]`,
served by uvicorn, or by gunicorn with `--server gunicorn-sync` (its default workers), `gunicorn-gthread`, or
`gunicorn-sync-one` (one sync worker).
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import tempfile
from pathlib import Path

from tests.support.drf import CONFIGURATIONS, CORRECT, SERVERS


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m tests.support.drf", description=__doc__, allow_abbrev=False)
    parser.add_argument("--variant", choices=CONFIGURATIONS, default=CORRECT)
    parser.add_argument(
        "--realm-url", required=True, help="issuer of accepted tokens, e.g. http://127.0.0.1:8000/realms/shop"
    )
    parser.add_argument("--port", type=int, default=8001, help="0 picks a free port")
    parser.add_argument("--server", choices=SERVERS, default=SERVERS[0], help="uvicorn, or gunicorn (-one: 1 worker)")
    parser.add_argument("--extra-products", type=int, default=0, help="more products in one product line")
    parser.add_argument("--port-file", type=Path, help="write the port here once it is bound")
    return parser.parse_args(argv)


def stop(signum: int, frame: object) -> None:
    """SIGTERM ends the process through SystemExit, so that the database directory is removed."""
    raise SystemExit(0)


def main(argv: list[str] | None = None) -> None:
    args = parse(argv)
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(("127.0.0.1", args.port))
    except OSError as error:
        raise SystemExit(f"cannot listen on 127.0.0.1:{args.port}: {error.strerror}") from None
    directory, parent = tempfile.mkdtemp(prefix="shop-drf-"), os.getpid()
    try:
        from tests.support.drf.config import configure  # Django is configured once, here

        configure(args.variant, args.realm_url, Path(directory) / "shop.sqlite3")
        from tests.support.drf.seed import seed

        seed(args.extra_products)
        if args.port_file:  # written whole, then renamed: a reader never sees half a port number
            written = args.port_file.with_suffix(".partial")
            written.write_text(str(sock.getsockname()[1]))
            written.replace(args.port_file)
        if args.server == "uvicorn":
            serve_uvicorn(sock)
        else:
            from tests.support.drf.under_gunicorn import WORKERS, serve

            worker, _, one = args.server.removeprefix("gunicorn-").partition("-")
            serve(sock, worker, workers=1 if one else WORKERS)
    finally:
        if os.getpid() == parent:  # a gunicorn worker leaves through SystemExit too: it must not remove the database
            shutil.rmtree(directory, ignore_errors=True)


def serve_uvicorn(sock: socket.socket) -> None:
    import uvicorn
    from django.core.asgi import get_asgi_application

    signal.signal(signal.SIGTERM, stop)  # uvicorn shuts down gracefully, then re-raises the signal here
    config = uvicorn.Config(get_asgi_application(), log_level="warning", access_log=False, lifespan="off")
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()
