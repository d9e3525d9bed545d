"""Response steering, as Prism does it: `Prefer: code=NNN` and `Prefer: example=NAME`.

- A `code` of an error status gets the operation's declared response for it, with a problem body.
- A `code` of a success status gets what the operation would answer, computed without changing the
  state. A read is simply served. A write is served on a scratch copy of the state (see `success`).
- `example=NAME` gets the named example of one of the operation's responses (`examples:` in the
  spec). With `code` too, only an example of that status counts.
- A status the operation does not declare, or an example it does not have, is a 400 naming the ones
  it has. A value that a preference does not take is a 400 naming the preference (`prefer`).

Only the API's operations are steered, so the admin API and the realm ignore `Prefer`. A request
without `Prefer` costs only a look in `header_names`. Steering never changes the state. It answers
`Preference-Applied` (RFC 7240) when it honoured the preference.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mock_server.api.security import CHALLENGE
from mock_server.control.mock_sessions.scope import CURRENT
from mock_server.control.prefer import PreferenceError, preferences, sent
from mock_server.http.middleware import send_problem
from mock_server.spec.errors import PROBLEM_JSON, problem_bytes
from mock_server.spec.operations import Operation, OperationIndex, describe
from mock_server.spec.quoting import quote
from mock_server.state.store import Store

Scratch = Callable[[], Store]  # It makes a scratch copy of the request's current state.


class Steering:
    def __init__(self, app: ASGIApp, index: OperationIndex, scratch: Scratch) -> None:
        self.app = app
        self.index = index
        self.scratch = scratch

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        operation = self.index.find(scope["method"], scope["path"]) if scope["type"] == "http" and sent(scope) else None
        if operation is None:
            await self.app(scope, receive, send)
            return
        try:
            preferred = preferences(scope, operation)
        except PreferenceError as error:
            await send_problem(send, 400, error.detail)
            return
        if preferred is None or not preferred.steer():
            await self.app(scope, receive, send)
            return
        code = preferred.code
        if preferred.example is not None:
            await self.example(operation, preferred.example, code, send)
            return
        assert code is not None  # steer(): a code, else an example
        if code >= 300:
            await self.error(code, send)
        elif scope["method"] == "GET":
            await self.app(scope, receive, self.applied(send, code))
        else:
            await self.success(operation, code, scope, receive, send)

    async def example(self, operation: Operation, name: str, code: int | None, send: Send) -> None:
        named: dict[str, tuple[int, str, Any]] = {}
        for status, response in operation.responses.items():
            if status.isdecimal() and (code is None or status == str(code)):
                for media, content in response.get("content", {}).items():
                    for example, value in content.get("examples", {}).items():
                        named.setdefault(example, (int(status), media, value.get("value")))
        if name not in named:
            which = f"{operation.operation_id} for status {code}" if code else operation.operation_id
            detail = f"Prefer: example {quote(name)} is not an example of {which} ({describe(sorted(named))})."
            await send_problem(send, 400, detail)
            return
        found, media, value = named[name]
        await respond(send, found, media, json.dumps(value).encode(), f"example={name}")

    async def error(self, status: int, send: Send) -> None:
        body = problem_bytes(status, f"Steered by Prefer: code={status}.")
        extra = [(b"www-authenticate", CHALLENGE.encode())] if status == 401 else []
        await respond(send, status, PROBLEM_JSON, body, f"code={status}", extra)

    async def success(self, operation: Operation, status: int, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve a write's success on a scratch copy of the state, so the real state never sees it.

        The request goes through every layer an unsteered one does: the fast path, or Connexion's
        security, validators, form and multipart parsers, and the handler. Only the current state is
        the scratch copy. So it succeeds steered exactly when it would unsteered, whatever its media
        type, and its answer is the one it would get."""
        answer = Answer()
        current = CURRENT.set(self.scratch())
        try:
            await self.app(scope, receive, answer)
        finally:
            CURRENT.reset(current)
        if answer.status != status:
            detail = (
                f"Prefer: code={status} cannot be honoured: {operation.operation_id} would not succeed for this "
                f"request (it would answer {answer.status}: send it without Prefer to see why)."
            )
            await send_problem(send, 400, detail)
            return
        applied = self.applied(send, status)
        for message in answer.messages:
            await applied(message)

    @staticmethod
    def applied(send: Send, status: int) -> Send:
        """`send`, with `Preference-Applied` on an answer of the preferred status (a read may 404)."""

        async def with_header(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] == status:
                message = {
                    **message,
                    "headers": [*message["headers"], (b"preference-applied", f"code={status}".encode())],
                }
            await send(message)

        return with_header


class Answer:
    """A `send` that keeps the answer, to be sent (or replaced) once its status is known."""

    def __init__(self) -> None:
        self.status: int | None = None
        self.messages: list[Message] = []

    async def __call__(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self.status = message["status"]
        self.messages.append(message)


async def respond(
    send: Send, status: int, media: str, body: bytes, preference: str, extra: list[tuple[bytes, bytes]] | None = None
) -> None:
    headers = [(b"content-type", media.encode()), (b"preference-applied", preference.encode())]
    if status != 204:
        headers.append((b"content-length", str(len(body)).encode()))
    else:
        body = b""
    await send({"type": "http.response.start", "status": status, "headers": headers + (extra or [])})
    await send({"type": "http.response.body", "body": body})
