"""Every error the mock answers, rendered once in the spec's `Problem` shape (RFC 9457).

MockError
├── BadRequest        400  names the offending field(s) in `errors`
├── Unauthorized      401  carries WWW-Authenticate
├── NotFound          404
├── Conflict          409
├── PayloadTooLarge   413
└── UnsupportedMedia  415
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from http import HTTPStatus
from typing import Any

from mock_server.schemas import FieldError

PROBLEM_JSON = "application/problem+json"


class MockError(Exception):
    status = 500

    def __init__(self, detail: str, *, errors: Iterable[FieldError] = (), headers: Mapping[str, str] | None = None):
        super().__init__(detail)
        self.detail = detail
        self.errors = list(errors)
        self.headers = dict(headers or {})


class BadRequest(MockError):
    status = 400


class Unauthorized(MockError):
    status = 401


class NotFound(MockError):
    status = 404


class Conflict(MockError):
    status = 409


class PayloadTooLarge(MockError):
    status = 413


class UnsupportedMedia(MockError):
    status = 415


def problem_body(status: int, detail: str, errors: Iterable[FieldError] = ()) -> dict[str, Any]:
    body: dict[str, Any] = {
        "type": "about:blank",
        "title": HTTPStatus(status).phrase,
        "status": status,
        "detail": detail,
    }
    field_errors = [{"field": e.field, "message": e.message} for e in errors]
    if field_errors:
        body["errors"] = field_errors
    return body


def problem_bytes(status: int, detail: str, errors: Iterable[FieldError] = ()) -> bytes:
    return json.dumps(problem_body(status, detail, errors)).encode()
