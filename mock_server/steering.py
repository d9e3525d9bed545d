"""Response steering, as Prism does it: `Prefer: code=NNN` and `Prefer: example=NAME`.

- `code` of an error status: the operation's declared response for it, with a problem body;
- `code` of a success status: what the operation would answer, computed without changing state (a
  read is simply served; a write runs on a scratch copy of the state, see `DryRun`);
- `example=NAME`: the named example of one of the operation's responses (`examples:` in the spec);
  with `code` too, of that status only;
- a status the operation does not declare, or an example it does not have: 400 naming the ones it has.

A request without `Prefer` costs a look in `header_names` (`operations.prefer`). Steering never
changes the state, and answers `Preference-Applied` (RFC 7240) when it honoured the preference.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from connexion.frameworks.starlette import Starlette as StarletteFramework
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mock_server.auth import CHALLENGE
from mock_server.errors import PROBLEM_JSON, problem_bytes
from mock_server.fastpath import FastPath
from mock_server.middleware import send_problem
from mock_server.operations import Operation, OperationIndex, describe, prefer

DryRun = Callable[[], FastPath]  # a fast path over a scratch copy of the current state


class Steering:
    def __init__(self, app: ASGIApp, index: OperationIndex, dry_run: DryRun) -> None:
        self.app = app
        self.index = index
        self.dry_run = dry_run

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        preferences = prefer(scope)
        if preferences is None or not ("code" in preferences or "example" in preferences):
            await self.app(scope, receive, send)
            return
        operation = self.index.find(scope["method"], scope["path"])
        if operation is None:
            await self.app(scope, receive, send)
            return
        code = preferences.get("code")
        if code is not None and (not code.isdecimal() or int(code) not in operation.declared()):
            declared = describe(operation.declared())
            detail = f"Prefer: code={code} is not a status {operation.operation_id} declares ({declared})."
            await send_problem(send, 400, detail)
            return
        if "example" in preferences:
            await self.example(operation, preferences["example"], code, send)
        elif int(code or 0) >= 300:
            await self.error(int(code or 0), send)
        elif scope["method"] == "GET":
            await self.app(scope, receive, self.applied(send, int(code or 0)))
        else:
            await self.success(operation, int(code or 0), scope, receive, send)

    async def example(self, operation: Operation, name: str, code: str | None, send: Send) -> None:
        named: dict[str, tuple[int, str, Any]] = {}
        for status, response in operation.responses.items():
            if status.isdecimal() and (code is None or status == code):
                for media, content in response.get("content", {}).items():
                    for example, value in content.get("examples", {}).items():
                        named.setdefault(example, (int(status), media, value.get("value")))
        if name not in named:
            which = f"{operation.operation_id} for status {code}" if code else operation.operation_id
            detail = f"Prefer: example={name} is not an example of {which} ({describe(sorted(named))})."
            await send_problem(send, 400, detail)
            return
        found, media, value = named[name]
        await respond(send, found, media, json.dumps(value).encode(), f"example={name}")

    async def error(self, status: int, send: Send) -> None:
        body = problem_bytes(status, f"Steered by Prefer: code={status}.")
        extra = [(b"www-authenticate", CHALLENGE.encode())] if status == 401 else []
        await respond(send, status, PROBLEM_JSON, body, f"code={status}", extra)

    async def success(self, operation: Operation, status: int, scope: Scope, receive: Receive, send: Send) -> None:
        """A write's success, run on a scratch copy of the state: the real state never sees it."""
        scratch = self.dry_run()
        found = scratch.recognise(scope)
        response = None
        if found is not None:
            route, arguments = found
            response = await scratch.write(route, arguments, await scratch.request_body(route, receive))
        if response is None or response.status_code != status:
            detail = (
                f"Prefer: code={status} cannot be honoured: {operation.operation_id} would not succeed for this "
                "request (send it without Prefer to see its error)."
            )
            await send_problem(send, 400, detail)
            return
        framework = StarletteFramework.connexion_to_framework_response(response)
        await framework(scope, receive, self.applied(send, status))

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
