"""A response that streams until its client leaves, ended when the server stops.

Asked to stop (SIGINT, SIGTERM), uvicorn closes the idle connections, asks each busy one to close
once its response is complete (`HttpToolsProtocol.shutdown`), and waits for them, up to its
`timeout_graceful_shutdown`. A response that never completes by itself (the dashboard's live
stream) held every stop that long, and ended in a reset. Such a response registers, in its
request's state (`scope["state"]`, shared by every copy of the scope), how to end it
(`when_stopping`); the mock's protocol (`limits.bounded_protocol`) calls it (`stop_streaming`) when
the server asks the connection to close. The response then ends as any other does: its client
reads the end of the body, and the server closes the connection.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from starlette.types import Scope

STOP = "mock.stop"  # the request state's key of the callable ending its response


def when_stopping(scope: Scope, end: Callable[[], None]) -> None:
    """Have `end` called when the server stops (nothing under a server that gives no request state)."""
    state = scope.get("state")
    if isinstance(state, dict):
        state[STOP] = end


def stop_streaming(scope: Mapping[str, object]) -> None:
    """End the response of `scope` if it asked to be ended when the server stops."""
    state = scope.get("state")
    end = state.get(STOP) if isinstance(state, dict) else None
    if callable(end):
        end()
