"""A response that streams until its client leaves, ended when the server stops.

Asked to stop by SIGINT or SIGTERM, uvicorn closes the idle connections. It asks each busy one to
close once its response is complete (`HttpToolsProtocol.shutdown`). It then waits for them, up to its
`timeout_graceful_shutdown`. A response that never completes by itself, such as the dashboard's live
stream, held every stop that long, and ended in a reset.

So such a response registers how to end it, with `when_stopping`. It does so in its request's state,
`scope["state"]`, which every copy of the scope shares. The mock's protocol (`limits.bounded_protocol`)
calls it through `stop_streaming` when the server asks the connection to close. The response then
ends as any other does. Its client reads the end of the body, and the server closes the connection.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from starlette.types import Scope

STOP = "mock.stop"  # The request state's key of the callable ending its response.


def when_stopping(scope: Scope, end: Callable[[], None]) -> None:
    """Have `end` called when the server stops. Nothing happens under a server that gives no request state."""
    state = scope.get("state")
    if isinstance(state, dict):
        state[STOP] = end


def stop_streaming(scope: Mapping[str, object]) -> None:
    """End the response of `scope` if it asked to be ended when the server stops."""
    state = scope.get("state")
    end = state.get(STOP) if isinstance(state, dict) else None
    if callable(end):
        end()
