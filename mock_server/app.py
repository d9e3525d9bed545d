"""create_app(settings) -> the mock: the only module that wires Connexion.

Request path, outermost first: RequestJournal -> CORS -> FastPath (a valid request answered by its
handler) -> BodyLimit -> AllowHeader -> Connexion (routing, security from the spec's schemes,
validation from the spec's schemas) -> a handler of `routing.handler_table` -> the store.
/__mock__ and /realms/shop are plain routes beside the API.
"""

from __future__ import annotations

import copy
from collections import deque
from collections.abc import Iterable
from typing import Any

from connexion import AsyncApp
from connexion.exceptions import ProblemException
from connexion.lifecycle import ConnexionRequest, ConnexionResponse
from connexion.middleware import MiddlewarePosition
from connexion.options import SwaggerUIOptions
from connexion.resolver import Resolver
from starlette.exceptions import HTTPException
from starlette.middleware.cors import CORSMiddleware

from mock_server import store as domain
from mock_server.admin import Admin
from mock_server.auth import CHALLENGE, ApiKeys, Realm
from mock_server.errors import PROBLEM_JSON, MockError, problem_bytes
from mock_server.fastpath import Credential, FastPath, api_key_credential, bearer_credential, fast_routes
from mock_server.hotpath import (
    ApiKeyHandler,
    BearerHandler,
    CompiledParameterValidator,
    DecoratedOnceASGIApp,
    quiet_content_type_note,
)
from mock_server.identity import Identity
from mock_server.middleware import AllowHeader, BodyLimit, JournalEntry, RequestJournal
from mock_server.pagination import PageNotFound
from mock_server.routing import handler_table, operation_table
from mock_server.schemas import FieldError, Schema, load_spec, mount_points
from mock_server.settings import Settings
from mock_server.state import open_store
from mock_server.validation import validator_map

BACKEND_PREFIX, GATEWAY_PREFIX = mount_points(load_spec())
GATEWAY_SECURITY: list[dict[str, list[str]]] = [{"JWTAuth": []}]


class MockApp(AsyncApp):  # type: ignore[misc]
    """The Connexion app, with the parts tests and the admin API reach into."""

    store: domain.Store
    realm: Realm
    journal: deque[JournalEntry]
    settings: Settings

    def __init__(self, import_name: str, **options: Any) -> None:
        super().__init__(import_name, **options)
        # Handlers decorated once per operation, not per request (see mock_server.hotpath); no API
        # has been added yet, so swapping the innermost app here loses nothing.
        self._middleware_app = self.middleware.app = DecoratedOnceASGIApp()


def gateway_spec(spec: Schema) -> Schema:
    """The customers operations only, as the gateway serves them: bearer token required."""
    gateway = copy.deepcopy(spec)
    gateway["paths"] = {path: item for path, item in gateway["paths"].items() if "servers" in item}
    for item in gateway["paths"].values():
        for operation in item.values():
            if isinstance(operation, dict) and "operationId" in operation:
                operation["security"] = GATEWAY_SECURITY
    gateway["security"] = GATEWAY_SECURITY
    return gateway


def security_map(api_keys: ApiKeys, realm: Realm) -> dict[str, type]:
    """Bind the spec's two schemes to our checks, without putting Python names in the spec."""

    def api_key_info(key: str) -> dict[str, Any] | None:
        return {"sub": "api-key"} if api_keys.accepts(key) else None

    class ApiKey(ApiKeyHandler):
        def _resolve_func(self, security_scheme: Schema) -> Any:
            return api_key_info

    class Bearer(BearerHandler):
        def _resolve_func(self, security_scheme: Schema) -> Any:
            return realm.verify

    return {"apiKey": ApiKey, "bearer": Bearer}


def credential_checks(schemes: dict[str, Schema], api_keys: ApiKeys, realm: Realm) -> dict[str, Credential]:
    """The spec's schemes, by name, as `FastPath` checks them: the same functions as `security_map`'s."""
    checks = {}
    for name, scheme in schemes.items():
        if scheme["type"] == "apiKey" and scheme["in"] == "header":
            checks[name] = api_key_credential(scheme["name"], api_keys.accepts)
        elif scheme["type"] == "http" and scheme["scheme"] == "bearer":
            checks[name] = bearer_credential(realm.verify)
    return checks


def problem_response(status: int, detail: str, errors: Iterable[FieldError] = ()) -> ConnexionResponse:
    headers = {"WWW-Authenticate": CHALLENGE} if status == 401 else {}
    return ConnexionResponse(
        status_code=status,
        mimetype=PROBLEM_JSON,
        content_type=PROBLEM_JSON,
        body=problem_bytes(status, detail, errors),
        headers=headers,
    )


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
        case ProblemException():  # Connexion's own: security, parameters, media type
            return problem_response(error.status, str(error.detail or error.title).split("\n")[0])
        case HTTPException():
            return problem_response(error.status_code, error.detail)
    return problem_response(500, "Internal error.")


def create_app(settings: Settings | None = None, dataset: domain.Dataset | None = None) -> MockApp:
    """A fresh mock: its realm and journal, and the store the settings select (`state.open_store`),
    seeded from `dataset`, else the settings' fixtures."""
    settings = settings or Settings()
    spec = load_spec()
    quiet_content_type_note()
    app = MockApp(__name__, swagger_ui_options=SwaggerUIOptions(swagger_ui=True))
    app.settings = settings
    app.store = open_store(settings, dataset)
    app.realm = Realm(token_ttl=settings.token_ttl)
    app.journal = deque(maxlen=settings.journal_size)

    readers, writers = operation_table(app.store)
    handlers = handler_table(readers, writers)
    api_keys = ApiKeys(settings.api_keys)
    options: dict[str, Any] = {
        "resolver": Resolver(function_resolver=handlers.__getitem__),
        "validator_map": {**validator_map(), "parameter": CompiledParameterValidator},
        "security_map": security_map(api_keys, app.realm),
        "validate_responses": settings.validate_responses,
    }
    app.add_api(copy.deepcopy(spec), base_path=BACKEND_PREFIX, name="backend", **options)
    gateway = gateway_spec(spec)
    app.add_api(gateway, base_path=GATEWAY_PREFIX, name="gateway", **options)

    for exception in (MockError, domain.StoreError, PageNotFound, ProblemException, HTTPException):
        app.add_error_handler(exception, render_error)

    routes = AllowHeader.table(spec, {BACKEND_PREFIX: list(spec["paths"]), GATEWAY_PREFIX: list(gateway["paths"])})
    before_exception = MiddlewarePosition.BEFORE_EXCEPTION
    app.add_middleware(RequestJournal, position=before_exception, journal=app.journal)
    app.add_middleware(
        CORSMiddleware,
        position=before_exception,
        allow_origins=list(settings.cors_origins),
        allow_methods=["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"],
        allow_headers=["Authorization", "Content-Type", "X-API-Key"],
        expose_headers=["WWW-Authenticate", "Allow"],
    )
    if settings.fast_path and not settings.validate_responses:
        # inside CORS and the journal (their headers and records), before the layers a valid request skips
        credentials = credential_checks(spec["components"]["securitySchemes"], api_keys, app.realm)
        shortcuts = [
            *fast_routes(spec, BACKEND_PREFIX, readers, writers, credentials),
            *fast_routes(gateway, GATEWAY_PREFIX, readers, writers, credentials),
        ]
        app.add_middleware(
            FastPath, position=before_exception, routes=shortcuts, max_body_bytes=settings.max_body_bytes
        )
    app.add_middleware(BodyLimit, position=before_exception, max_bytes=settings.max_body_bytes)
    app.add_middleware(AllowHeader, position=before_exception, routes=routes)

    for part in (Admin(app.store, app.journal), Identity(app.realm)):
        for method, path, endpoint in part.routes():
            app.add_url_rule(path, endpoint=endpoint.__name__, view_func=endpoint, methods=[method])
    return app
