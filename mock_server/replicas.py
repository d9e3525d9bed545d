"""`--workers N`: N uvicorn worker processes serving one shared state.

uvicorn starts each worker from an import string, so a worker cannot be handed an app. It builds its
own with `worker_app`, from the settings the parent leaves in an environment variable. They are
pickled, since the parent writes them for its own children only. The parent opens the state first.
So the seed is in place, or the error reported, before any worker starts, and the workers then join
it. The workers' metrics go to one directory the parent makes for them (`metrics_directory`).
"""

from __future__ import annotations

import base64
import contextlib
import gc
import logging
import os
import pickle
import shutil
import socket
import tempfile
from collections.abc import Iterator

import uvicorn

from mock_server.app import MockApp, create_app
from mock_server.http.jsonlog import log_json_lines, uvicorn_log_options
from mock_server.http.limits import WORKER_OPTIONS
from mock_server.ops.tally import MULTIPROCESS_DIRECTORY
from mock_server.settings import Settings
from mock_server.shutdown import Workers, grace_options, log_cut_requests

ENVIRONMENT = "SHOP_MOCK_WORKER_SETTINGS"


def serve_workers(settings: Settings, sock: socket.socket) -> None:
    """Serve `settings.workers` workers on `sock`, bound by the CLI, until stopped by `shutdown.Workers`."""
    os.environ[ENVIRONMENT] = base64.b64encode(pickle.dumps(settings)).decode("ascii")
    with metrics_directory():
        serve(settings, sock)


@contextlib.contextmanager
def metrics_directory() -> Iterator[None]:
    """A fresh directory for every worker's metrics, in prometheus_client's multiprocess mode.

    It is removed at the end. A directory the environment names already is used as it is.
    """
    if os.environ.get(MULTIPROCESS_DIRECTORY):
        yield
        return
    directory = tempfile.mkdtemp(prefix="shop-mock-metrics-")
    os.environ[MULTIPROCESS_DIRECTORY] = directory
    try:
        yield
    finally:
        del os.environ[MULTIPROCESS_DIRECTORY]
        shutil.rmtree(directory, ignore_errors=True)


def serve(settings: Settings, sock: socket.socket) -> None:
    config = uvicorn.Config(
        f"{__name__}:worker_app",
        factory=True,
        workers=settings.workers,
        log_level=settings.log_level,
        access_log=settings.access_log,
        lifespan="off",
        **WORKER_OPTIONS,
        **grace_options(settings.shutdown_timeout),
        **uvicorn_log_options(settings.log_format),
    )
    sock.set_inheritable(True)
    Workers(config, sockets=[sock]).run()


def worker_app() -> MockApp:
    """The app of one worker, as uvicorn's factory."""
    settings: Settings = pickle.loads(base64.b64decode(os.environ[ENVIRONMENT]))
    if settings.log_format == "json":
        log_json_lines(settings.log_level)
    app = create_app(settings)
    app.realm.make_keys()  # before the worker accepts connections, and before gc.freeze
    gc.freeze()
    logging.getLogger("connexion").setLevel(logging.WARNING)
    log_cut_requests()
    return app
