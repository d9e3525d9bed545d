"""Every error the mock answers is rendered in the spec's `Problem` shape (RFC 9457).

Errors come from four places, and `app.render_error` renders them all:
- `MockError` / `BadRequest` (400, naming the offending fields in `errors`): our body validators;
- the store's domain errors: `NotFound` (404), `Conflict` (409), `InvalidReference` (400),
  `StateUnavailable` (503: Redis did not answer);
- `pagination.PageNotFound` (404);
- Connexion's and Starlette's own (401 with WWW-Authenticate, 404, 405, 415).
The middleware in front of Connexion (413) writes the same shape with `problem_bytes`. A detail or a
field error may quote what a client sent (a validator's message quotes the value it refused): each
is cut to a bounded length (`quoting.cut`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from http import HTTPStatus
from typing import Any

from mock_server.spec.quoting import cut
from mock_server.spec.schemas import FieldError

PROBLEM_JSON = "application/problem+json"


class MockError(Exception):
    status = 500

    def __init__(self, detail: str, *, errors: Iterable[FieldError] = ()) -> None:
        super().__init__(detail)
        self.detail = detail
        self.errors = list(errors)


class BadRequest(MockError):
    status = 400


def problem_body(status: int, detail: str, errors: Iterable[FieldError] = ()) -> dict[str, Any]:
    body: dict[str, Any] = {
        "type": "about:blank",
        "title": HTTPStatus(status).phrase,
        "status": status,
        "detail": cut(detail),
    }
    field_errors = [{"field": cut(e.field), "message": cut(e.message)} for e in errors]
    if field_errors:
        body["errors"] = field_errors
    return body


def problem_bytes(status: int, detail: str, errors: Iterable[FieldError] = ()) -> bytes:
    return json.dumps(problem_body(status, detail, errors)).encode()
