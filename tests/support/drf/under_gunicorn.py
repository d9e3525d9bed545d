"""The backend under gunicorn, as Django is deployed: its WSGI application in 2 forked workers (or 1).

`sync` is gunicorn's default worker: one request at a time, `Connection: close` after every response.
`gthread` keeps connections alive and serves several requests per worker at once. The workers fork
from this process after Django is configured and the database seeded, so every worker sees the same
settings and the same SQLite file.
"""

from __future__ import annotations

import socket
from typing import Any

from django.core.handlers.wsgi import WSGIHandler
from django.core.wsgi import get_wsgi_application
from django.db import connections
from gunicorn.app.base import BaseApplication

WORKERS = 2
THREADS = 4  # gthread only: with more than one thread gunicorn turns a sync worker into gthread


class Gunicorn(BaseApplication):  # type: ignore[misc]  # gunicorn has no type hints
    """gunicorn's documented custom application: options set in code, the WSGI app handed over."""

    def __init__(self, application: WSGIHandler, options: dict[str, Any]) -> None:
        self.application = application
        self.options = options
        super().__init__()

    def load_config(self) -> None:
        for key, value in self.options.items():
            self.cfg.set(key, value)

    def load(self) -> WSGIHandler:
        return self.application


def serve(sock: socket.socket, worker: str, workers: int = WORKERS) -> None:
    """Serve on `sock` (bound, not yet listening) with `workers` workers of class `worker` until SIGTERM."""
    application = get_wsgi_application()
    connections.close_all()  # the seeding's connection must not be shared by the forked workers
    options: dict[str, Any] = {
        "bind": [f"fd://{sock.detach()}"],  # gunicorn owns (and closes) the descriptor from here on
        "workers": workers,
        "worker_class": worker,
        "threads": THREADS if worker == "gthread" else 1,
        "loglevel": "warning",
        "accesslog": None,
        "graceful_timeout": 5,
    }
    Gunicorn(application, options).run()
