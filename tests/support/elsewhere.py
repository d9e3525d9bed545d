"""Where the suite's requests may go: a collector socket standing for a host the user never named, and the mock
counting what it gets (tests of `replay` and of the exported tests, which send the user's credentials)."""

from __future__ import annotations

import contextlib
import socket
import threading
from typing import Any

from mock_server.app import create_app
from mock_server.settings import Settings

MOUNT = "/shop/api/v1"
GATEWAY_MOUNT = "/customers/v1"
SECRETS = {"SHOP_CONTRACT_API_KEY": "dev-api-key", "SHOP_CONTRACT_TOKEN": "a-token-of-the-user"}


class Collector:
    """A listening socket on a loopback port of its own, counting the connections made to it."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.origin = f"http://127.0.0.1:{self.server.getsockname()[1]}"
        self.received: list[bytes] = []
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        with contextlib.suppress(OSError):  # closed: the test is over
            while True:
                connection, _ = self.server.accept()
                with connection:
                    connection.settimeout(1)
                    with contextlib.suppress(OSError):
                        self.received.append(connection.recv(65536))

    def close(self) -> None:
        self.server.shutdown(socket.SHUT_RDWR)
        self.server.close()
        self._thread.join(timeout=5)


class Counted:
    """The mock, counting the requests it gets and keeping each one's path and query."""

    def __init__(self) -> None:
        self.app, self.requests = create_app(Settings()), 0
        self.targets: list[str] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            self.requests += 1
            self.targets.append(scope["path"] + "?" + scope["query_string"].decode("latin-1"))
        await self.app(scope, receive, send)
