"""The mock as an ASGI application a server imports by name (hypercorn: `tests.support.zoo.asgi:mock(PORT)`)."""

from __future__ import annotations

from mock_server.app import MockApp, create_app
from mock_server.settings import Settings


def mock(port: int) -> MockApp:
    """The mock with its bundled data; its realm's issuer names `port`, where the server listens."""
    return create_app(Settings(port=port))
