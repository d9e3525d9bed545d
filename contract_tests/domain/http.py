"""The domain tests' HTTP side: calls by operation, and verdicts recorded with their evidence.

Every request goes through `Session.call`, so each verdict can show the exact request as a curl command
(credentials masked, as Schemathesis masks them) and the response it got.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx
from schemathesis.core import curl

from contract_tests.conformance import describe_response
from contract_tests.findings import Ledger, Violation
from contract_tests.spec import Operation
from contract_tests.target import Surface

MASKED = ("authorization", "x-api-key")
QUIET_HEADERS = ("accept", "accept-encoding", "connection", "user-agent", "content-length", "host")


class Unreachable(Exception):
    """The surface stopped answering in the middle of a domain test."""


@dataclass(frozen=True)
class Exchange:
    request: httpx.Request
    response: httpx.Response

    @property
    def status(self) -> int:
        return self.response.status_code

    def json(self) -> Any:
        try:
            return self.response.json()
        except ValueError:
            return None

    def curl(self) -> str:
        headers = {
            name: "[Filtered]" if name.lower() in MASKED else value
            for name, value in self.request.headers.items()
            if name.lower() not in QUIET_HEADERS
        }
        body = self.request.content.decode("utf-8", "replace") or None
        generated = curl.generate(
            method=self.request.method,
            url=str(self.request.url),
            body=body,
            verify=True,
            headers=headers,
            known_generated_headers=None,
        )
        return generated.command

    def shown(self) -> str:
        headers = {name: [value] for name, value in self.response.headers.items()}
        return describe_response(self.status, headers, self.response.content)


class Session:
    """Calls on one surface, and the ledger its verdicts go to."""

    def __init__(self, surface: Surface, ledger: Ledger, timeout: float) -> None:
        self.surface = surface
        self.ledger = ledger
        self.client = httpx.Client(timeout=timeout)

    def close(self) -> None:
        self.client.close()

    def url(self, op: Operation, params: dict[str, Any]) -> str:
        path = op.path
        for name, value in params.items():
            path = path.replace(f"{{{name}}}", quote(str(value), safe=""))
        return self.surface.url(path)

    def call(
        self,
        op: Operation,
        path_params: dict[str, Any] | None = None,
        *,
        query: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
        url: str | None = None,
        **content: Any,
    ) -> Exchange:
        """`op` at `path_params`; `headers` replace the surface's credentials; `content` goes to httpx."""
        request = self.client.build_request(
            op.method.upper(),
            url or self.url(op, path_params or {}),
            params=query,
            headers=self.surface.headers if headers is None else headers,
            **content,
        )
        request.read()  # a multipart body streams; read it once so that the reproduction can show it
        try:
            response = self.client.send(request)
        except httpx.HTTPError as exc:
            raise Unreachable(f"{request.method} {request.url}: {exc or type(exc).__name__}") from exc
        return Exchange(request, response)

    def judge(
        self, check: str, op: Operation, exchange: Exchange, broken: str | None, setup: Sequence[Exchange] = ()
    ) -> bool:
        """Record a pass, or the violation `broken` describes; True when the rule held.

        `setup`: the requests that made the state `exchange` depends on, for a self-contained reproduction.
        """
        if broken is None:
            self.ledger.passed(self.surface.name, op.id, check)
            return True
        steps = tuple(step.curl() for step in setup if step is not exchange)
        violation = Violation(check, self.surface.name, op.id, broken, exchange.curl(), exchange.shown(), steps)
        self.ledger.violated(violation)
        return False
