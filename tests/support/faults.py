"""Fault injection for the broken variants of the mock: a small ASGI middleware, and nothing else.

`Fault` wraps a fresh mock. For requests it matches, it can rewrite the request body before the mock
sees it, answer by itself, or rewrite the mock's answer (status, headers, body) before the client sees it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Scope = dict[str, Any]
Message = dict[str, Any]
Answer = tuple[int, dict[str, str], bytes]


@dataclass
class Fault:
    """Wraps `app`; `method` and `path` (a regex on the full path) select the requests it touches."""

    app: Any
    method: str
    path: str
    request: Callable[[Scope, bytes], bytes] | None = None
    respond: Callable[[Scope], Answer] | None = None
    response: Callable[[Scope, Answer], Answer] | None = None

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != self.method or not re.fullmatch(self.path, scope["path"]):
            await self.app(scope, receive, send)
            return
        if self.respond is not None:
            await send_answer(send, self.respond(scope))
            return
        if self.request is not None:
            scope, receive = await _rewritten(scope, receive, self.request)
        if self.response is None:
            await self.app(scope, receive, send)
            return
        await send_answer(send, self.response(scope, await answer_of(self.app, scope, receive)))


async def _rewritten(scope: Scope, receive: Any, rewrite: Callable[[Scope, bytes], bytes]) -> tuple[Scope, Any]:
    return with_body(scope, rewrite(scope, await whole_body(receive)))


async def whole_body(receive: Any) -> bytes:
    """The request's body, read to its end."""
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            return body


def with_body(scope: Scope, body: bytes) -> tuple[Scope, Any]:
    """The request of `scope` with `body` instead of its own: a copy of the scope whose `Content-Length` is
    the body's, and a `receive` that gives the body once."""
    scope = {**scope, "headers": [(k, v) for k, v in scope["headers"] if k.lower() != b"content-length"]}
    scope["headers"].append((b"content-length", str(len(body)).encode()))
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return scope, replay


async def answer_of(app: Any, scope: Scope, receive: Any) -> Answer:
    """`app`'s whole answer to the request `receive` gives, captured instead of sent."""
    captured: dict[str, Any] = {"body": b""}

    async def capture(message: Message) -> None:
        if message["type"] == "http.response.start":
            captured["status"] = message["status"]
            captured["headers"] = {k.decode(): v.decode() for k, v in message.get("headers", [])}
        elif message["type"] == "http.response.body":
            captured["body"] += message.get("body", b"")

    await app(scope, receive, capture)
    return captured["status"], captured["headers"], captured["body"]


async def send_answer(send: Any, answer: Answer) -> None:
    status, headers, body = answer
    headers = {k: v for k, v in headers.items() if k.lower() != "content-length"}
    raw = [(k.encode(), v.encode()) for k, v in headers.items()] + [(b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


def edit_json(edit: Callable[[Any], Any]) -> Callable[[Scope, Answer], Answer]:
    """A response rewrite that edits the JSON body of successful answers."""

    def rewrite(scope: Scope, answer: Answer) -> Answer:
        status, headers, body = answer
        if not 200 <= status < 300 or not body:
            return answer
        return status, headers, json.dumps(edit(json.loads(body))).encode()

    return rewrite


def header(scope: Scope, name: str) -> str:
    return next((v.decode() for k, v in scope["headers"] if k.decode().lower() == name), "")
