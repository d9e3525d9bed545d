"""The one renderer of every error, wherever raised, in the spec's Problem shape (`spec/errors.py`).

Connexion calls `render_error` for each exception type the app registers, its own included. Those
are a security refusal, a media type it does not take and a route it does not know.
"""

from __future__ import annotations

from collections.abc import Iterable

from connexion.exceptions import ProblemException
from connexion.lifecycle import ConnexionRequest, ConnexionResponse
from starlette.exceptions import HTTPException

from mock_server.api.pagination import PageNotFound
from mock_server.api.security import CHALLENGE
from mock_server.http.middleware import INTERNAL_ERROR, log_unexpected
from mock_server.spec.errors import PROBLEM_JSON, MockError, problem_bytes
from mock_server.spec.schemas import FieldError, load_spec
from mock_server.state import store as domain
from mock_server.surfaces import GATEWAY_PREFIX

API_KEY_HEADER = next(s["name"] for s in load_spec()["components"]["securitySchemes"].values() if s["type"] == "apiKey")
HANDLED = (MockError, domain.StoreError, PageNotFound, ProblemException, HTTPException, Exception)
"""The exception types the app hands to `render_error`, the most precise first."""


def problem_response(status: int, detail: str, errors: Iterable[FieldError] = ()) -> ConnexionResponse:
    headers = {"WWW-Authenticate": CHALLENGE} if status == 401 else {}
    return ConnexionResponse(
        status_code=status,
        mimetype=PROBLEM_JSON,
        content_type=PROBLEM_JSON,
        body=problem_bytes(status, detail, errors),
        headers=headers,
    )


def unauthorized_detail(request: ConnexionRequest, detail: str) -> str:
    """Connexion's 401 text, said precisely where it reads "No authorization token provided".

    It says what this surface takes, and that the gateway does not take an API key.
    """
    if "authorization" in request.headers:
        return detail
    if request.url.path.startswith(f"{GATEWAY_PREFIX}/"):
        if API_KEY_HEADER in request.headers:
            return f"The gateway takes only a bearer token (Authorization: Bearer ...), not {API_KEY_HEADER}."
        return "No bearer token: the gateway takes only Authorization: Bearer ... from the identity realm."
    if API_KEY_HEADER not in request.headers:
        return f"No credentials: send {API_KEY_HEADER} or Authorization: Bearer ..."
    return detail


def render_error(request: ConnexionRequest, error: Exception) -> ConnexionResponse:
    """The one renderer of every error, in the spec's Problem shape."""
    match error:
        case MockError():
            return problem_response(error.status, error.detail, error.errors)
        case domain.NotFound() | PageNotFound():
            return problem_response(404, str(error))
        case domain.Conflict():
            return problem_response(409, str(error))
        case domain.StateUnavailable():
            return problem_response(503, str(error))
        case domain.InvalidReference():
            return problem_response(400, str(error), [FieldError(error.field, str(error))])
        case ProblemException():  # Connexion's own, for security and the media type.
            detail = str(error.detail or error.title).split("\n")[0]
            if error.status == 401:
                detail = unauthorized_detail(request, detail)
            return problem_response(error.status, detail)
        case HTTPException():
            return problem_response(error.status_code, error.detail)
    log_unexpected(error)
    return problem_response(500, INTERNAL_ERROR)
