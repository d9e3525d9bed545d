"""The validation proxy, as Prism's proxy mode: the API's traffic goes to a real backend, checked.

`python -m mock_server --proxy URL` forwards each request of the spec's operations to the backend. The
path and query go as sent, and hop-by-hop headers are left out. The backend's response is answered
unchanged. On the way, the request and the response are checked against the spec:

- A request has a body only where the operation takes one. The body is of a declared content type,
  and a JSON body is valid against its schema. A form body's content type is checked, but its fields
  are not.
- A response has a declared status and a declared content type. A JSON body is valid against its
  schema. There is no body where the response declares none.

The backend is reached by `backend_client.BackendClient`, which is bounded. Each exchange has one
deadline, and the head and the body are capped, both as received and decoded. Past a bound the
answer is a 502.

A JSON body is read by the mock's bounded decoder (`inputs.load_json`). So a body nested too deeply
is a violation, not a crash. Each violation is logged on one line and kept at /__mock__/violations,
which holds the last `KEPT`. It is also noted in the request's journal entry. Its message is cut by
`quoting.cut`, because it quotes the offending value. At most `VIOLATIONS_PER_PART` are kept per
request or response.

With `fallback`, the mock's own state answers an operation the backend does not serve. The backend
does not serve it when it answers 404 or 501, or refuses the connection. So a front end can move to
the real backend one endpoint at a time. The admin API, the realm and the docs stay the mock's.
"""

from __future__ import annotations

import logging
from typing import Any

from starlette.types import ASGIApp, Receive, Scope, Send

from mock_server.control.backend_client import (
    DECODERS,
    Answer,
    BackendClient,
    BackendError,
    TooLarge,
    Unreachable,
    decoded,
)
from mock_server.control.violations.memory import VIOLATIONS_PER_PART, Violations
from mock_server.http.middleware import replay, send_problem
from mock_server.spec.errors import BadRequest
from mock_server.spec.inputs import load_json
from mock_server.spec.operations import Operation, OperationIndex, describe
from mock_server.spec.schemas import Schema, SchemaValidator

HOP_BY_HOP = frozenset(
    {b"connection", b"keep-alive", b"proxy-connection", b"te", b"trailer", b"transfer-encoding", b"upgrade", b"host"}
)
NOT_SERVED = (404, 501)
log = logging.getLogger("mock_server.proxy")


class Proxy:
    """ASGI middleware that sends the spec's operations to `backend`, checked, and anything else to the mock."""

    def __init__(
        self,
        app: ASGIApp,
        index: OperationIndex,
        backend: BackendClient,
        violations: Violations,
        fallback: bool,
        max_body_bytes: int,
    ) -> None:
        self.app = app
        self.index = index
        self.backend = backend
        self.violations = violations
        self.fallback = fallback
        self.max_body_bytes = max_body_bytes
        self.validators: dict[int, SchemaValidator] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        operation = self.index.find(scope["method"], scope["path"]) if scope["type"] == "http" else None
        if operation is None:
            await self.app(scope, receive, send)
            return
        body = await self.read_body(receive)
        if body is None:
            await send_problem(send, 413, f"The request body is larger than {self.max_body_bytes} bytes.")
            return
        headers = [(name, value) for name, value in scope["headers"] if name.lower() not in HOP_BY_HOP]
        self.report(scope, operation, None, "request", self.request_problems(operation, headers, body))
        path = (scope.get("raw_path") or scope["path"].encode()).decode("latin-1")
        query = scope["query_string"].decode("latin-1")
        try:
            answer = await self.backend.exchange(scope["method"], path + (f"?{query}" if query else ""), headers, body)
        except Unreachable as error:
            if self.fallback:
                await self.app(scope, replay(body, receive), send)
                return
            await self.refuse(send, error)
            return
        except BackendError as error:
            await self.refuse(send, error)
            return
        if self.fallback and answer.status in NOT_SERVED:
            await self.app(scope, replay(body, receive), send)
            return
        try:
            problems = self.response_problems(operation, answer)
        except TooLarge as error:
            await self.refuse(send, error)
            return
        self.report(scope, operation, answer.status, "response", problems)
        out = [(name, value) for name, value in answer.headers if name.lower() not in HOP_BY_HOP]
        await send({"type": "http.response.start", "status": answer.status, "headers": out})
        await send({"type": "http.response.body", "body": answer.body})

    async def refuse(self, send: Send, error: BackendError) -> None:
        """A 502 for a backend that gave no answer to pass on. The cause is logged, and the client sees only
        the 502."""
        log.warning("no answer passed on: %s", error)
        await send_problem(send, 502, str(error))

    def report(self, scope: Scope, operation: Operation, status: int | None, part: str, problems: list[str]) -> None:
        if problems:
            self.violations.report(scope, operation, status, part, problems)

    async def read_body(self, receive: Receive) -> bytes | None:
        """The whole request body, or None past the size limit.

        It is gathered in a bytearray. With `bytes`, a body sent a few bytes at a time was copied whole
        again for each piece."""
        body = bytearray()
        more = True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                break
            body += message.get("body", b"")
            more = message.get("more_body", False)
            if len(body) > self.max_body_bytes:
                return None
        return bytes(body)

    def request_problems(self, operation: Operation, headers: list[tuple[bytes, bytes]], body: bytes) -> list[str]:
        content: dict[str, Schema] = operation.request_body.get("content", {})
        if not body:
            return ["the request body is required and was not sent"] if operation.request_body.get("required") else []
        if not content:
            return [f"{operation.operation_id} takes no request body, and one was sent"]
        media = _media_type(headers)
        if media not in content:
            return [f"content type {media or 'none'!r} is not one {operation.operation_id} takes ({describe(content)})"]
        if media != "application/json":
            return []
        return self.json_problems(content[media].get("schema", {}), body, "request body")

    def response_problems(self, operation: Operation, answer: Answer) -> list[str]:
        """What `answer` breaks of the spec. It raises TooLarge if the body inflates past the proxy's limit."""
        status = str(answer.status)
        declared = operation.responses.get(status) or operation.responses.get(f"{status[0]}XX")
        declared = declared or operation.responses.get("default")
        if declared is None:
            return [f"status {status} is not declared for {operation.operation_id} ({describe(operation.declared())})"]
        content: dict[str, Schema] = declared.get("content", {})
        if not content:
            return [f"status {status} declares no body, and one was answered"] if answer.body else []
        media = _media_type(answer.headers)
        if media not in content:
            return [f"content type {media or 'none'!r} is not declared for status {status} ({describe(content)})"]
        if not media.endswith("json"):
            return []
        encoding = _header(answer.headers, b"content-encoding").lower() or "identity"
        if encoding != "identity" and encoding not in DECODERS:
            return [f"body not checked: content-encoding {encoding!r} is not one the proxy decodes"]
        try:
            raw = decoded(answer.body, encoding)
        except ValueError as error:
            return [f"the status {status} body is not valid {encoding}: {error}"]
        return self.json_problems(content[media].get("schema", {}), raw, f"status {status} body")

    def json_problems(self, schema: Schema, raw: bytes, what: str) -> list[str]:
        try:
            body = load_json(raw.decode("utf-8"), what)
        except UnicodeDecodeError as error:
            return [f"the {what} is not UTF-8 text: {error}"]
        except BadRequest as error:  # Not JSON, nested too deeply, or a lone surrogate.
            return [error.detail]
        validator = self.validators.get(id(schema))
        if validator is None:
            validator = self.validators[id(schema)] = SchemaValidator(schema)
        # Listing costs per error, and a 10 MiB page of wrong items breaks millions of rules. So the
        # errors are listed on a copy whose arrays keep only the items that can be listed. The whole
        # body is still checked for a first error.
        listed, shortened = _first_items(body, VIOLATIONS_PER_PART + 1)
        errors = validator.errors(listed)
        first = validator.first_error(body) if shortened else None
        if first is not None and first not in errors:
            errors.append(first)
        problems = [f"{what}: {error.field or '(the body)'}: {error.message}" for error in errors]
        if first is not None:
            keep = VIOLATIONS_PER_PART + 1
            problems.append(f"the {what}'s arrays are listed to their first {keep} items, violations past them are not")
        return problems


def _first_items(value: Any, keep: int) -> tuple[Any, bool]:
    """`value` with each array, at any depth, cut to its first `keep` items, and whether one was cut.

    It recurses safely, because a body has at most `inputs.MAX_JSON_DEPTH` levels."""
    if isinstance(value, list):
        items = [_first_items(item, keep) for item in value[:keep]]
        return [item for item, _ in items], len(value) > keep or any(shortened for _, shortened in items)
    if isinstance(value, dict):
        members = {key: _first_items(item, keep) for key, item in value.items()}
        return {key: item for key, (item, _) in members.items()}, any(shortened for _, shortened in members.values())
    return value, False


def _header(headers: list[tuple[bytes, bytes]], name: bytes) -> str:
    value = next((value for key, value in headers if key.lower() == name), b"")
    return value.decode("latin-1").strip()


def _media_type(headers: list[tuple[bytes, bytes]]) -> str:
    return _header(headers, b"content-type").split(";")[0].strip().lower()
