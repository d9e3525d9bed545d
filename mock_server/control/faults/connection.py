"""The server's connection behind a request, so that a fault can close it.

Closing a connection needs the server's transport. Under uvicorn, the only server the mock runs on,
it is the `transport` of the `send` callable uvicorn hands to the app. `MockApp` notes it in the
scope (`note_connection`) before Connexion's error middleware wraps `send`. The note is a weak
reference, because uvicorn's per-request object holds the scope. A strong one made a reference cycle
of every request, left to the garbage collector, which cost a tenth of a POST's time. The
dashboard's stream reads it too, to end a slow client's stream.
"""

from __future__ import annotations

import asyncio
import weakref
from typing import Any

from starlette.types import Scope, Send

CONNECTION = "mock.connection"  # The scope key of a weak reference to the server's per-request object.


def note_connection(scope: Scope, send: Send) -> None:
    """Keep, weakly, the server's object behind `send`. uvicorn's has the `transport`."""
    try:
        scope[CONNECTION] = weakref.ref(send.__self__)  # type: ignore[attr-defined]
    except (AttributeError, TypeError):  # A plain function, or an object that takes no weak reference.
        scope[CONNECTION] = None


def connection(scope: Scope) -> Any:
    """The server's per-request object noted by `note_connection`, or None."""
    noted = scope.get(CONNECTION)
    return noted() if noted is not None else None


async def hang_up(scope: Scope) -> None:
    """Close the client's connection now, whatever was sent. Under uvicorn it closes the transport behind `send`."""
    cycle = connection(scope)
    transport = getattr(cycle, "transport", None)
    if transport is None:
        raise ConnectionAbortedError("injected fault: this server gives no access to the connection")
    transport.close()
    for _ in range(10):  # Let the server see the connection lost before it checks for an answer.
        if getattr(cycle, "disconnected", True):
            return
        await asyncio.sleep(0)
