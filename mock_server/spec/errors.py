"""Every error the mock answers is rendered in the spec's `Problem` shape (RFC 9457).

Errors come from four places, and `rendering.render_error` renders them all:

- `MockError` and `BadRequest` come from our body validators. A `BadRequest` is a 400 that names the
  offending fields in `errors`.
- The store's domain errors are `NotFound` (404), `Conflict` (409), `InvalidReference` (400) and
  `StateUnavailable` (503, when Redis did not answer).
- `pagination.PageNotFound` is a 404.
- Connexion's and Starlette's own are a 401 with WWW-Authenticate, a 404, a 405 or a 415.

The middleware in front of Connexion writes the same shape with `problem_bytes`, for its 413. A detail
or a field error may quote what a client sent, because a validator's message quotes the value it
refused. So each is cut to a bounded length (`quoting.cut`).
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
