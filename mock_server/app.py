"""create_app(settings) -> the mock: the only module that wires Connexion.

A request asking for no control feature goes from MockApp straight to FastPath, journaled (control/bypass.py).
Any other request's path, outermost first: LastResort (an unexpected error is a problem+json 500) -> Faults (latency and
faults) -> RequestJournal -> AdminGuard (/__mock__/) -> CORS -> SessionScope (the request's X-Mock-Session
state) -> RawPath (routing on the path as sent) -> [Proxy, with --proxy: the API's traffic to a real backend,
checked] -> Steering (`Prefer: code / example`) -> FastPath (a valid request answered by its handler) ->
UISpec (the Swagger UI pages' copies of the spec, swagger_ui.py) -> BodyLimit -> AllowHeader -> Connexion
(routing, security from the spec's schemes, validation from the spec's schemas) -> a handler of
`routing.handler_table` -> the store.
/__mock__ and /realms/shop are plain routes beside the API.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from connexion import AsyncApp
from connexion.exceptions import ProblemException
from connexion.lifecycle import ConnexionRequest, ConnexionResponse
from connexion.middleware import MiddlewarePosition
from connexion.resolver import Resolver
from starlette.exceptions import HTTPException

from mock_server.api.addressing import BoundedURIParser, RawPath, left_as_sent, templates
from mock_server.api.connexion_seam import (
    ApiKeyHandler,
    BearerHandler,
    decorate_handlers_once,
    enter_as_connexion,
    quiet_content_type_note,
    validate_each_document_once,
)
from mock_server.api.fastpath import Credential, FastPath, api_key_credential, bearer_credential, fast_routes
from mock_server.api.pagination import PageNotFound
from mock_server.api.routing import handler_table, operation_table
from mock_server.api.security import CHALLENGE, ApiKeys
from mock_server.api.validation import validator_map
from mock_server.backends import open_control, open_sessions, open_store, realm_memory
from mock_server.control import swagger_ui
from mock_server.control.admin import PREFIX as ADMIN_PREFIX
from mock_server.control.admin import Admin
from mock_server.control.admin_guard import AdminGuard
from mock_server.control.backend_client import BackendClient
from mock_server.control.bypass import Bypass
from mock_server.control.dashboard.page import SHELL as DASHBOARD_SHELL
from mock_server.control.dashboard.page import Dashboard
from mock_server.control.faults.connection import note_connection
from mock_server.control.faults.memory import FaultRules
from mock_server.control.faults.middleware import Faults
from mock_server.control.journal.base import Journal
from mock_server.control.journal.middleware import RequestJournal
from mock_server.control.landing import Landing
from mock_server.control.mock_sessions.registry import HEADER as SESSION_HEADER
from mock_server.control.mock_sessions.registry import Sessions
from mock_server.control.mock_sessions.scope import ScopedStore, SessionScope
from mock_server.control.proxy import Proxy
from mock_server.control.steering import Steering
from mock_server.control.violations.memory import Violations
from mock_server.http.cors import CORS
from mock_server.http.middleware import INTERNAL_ERROR, AllowHeader, BodyLimit, LastResort, log_unexpected
from mock_server.realm import Realm, open_realm
from mock_server.realm.identity import Identity
from mock_server.settings import Settings
from mock_server.spec.errors import PROBLEM_JSON, MockError, problem_bytes
from mock_server.spec.operations import OperationIndex
from mock_server.spec.schemas import FieldError, Schema, load_spec, mount_points
from mock_server.state import store as domain
from mock_server.state.fixtures import record_fields
from mock_server.state.memory import MemoryStore
from shop_contract.document import SpecError

BACKEND_PREFIX, GATEWAY_PREFIX = mount_points(load_spec())  # the bundled spec's; an app has its own
GATEWAY_SECURITY: list[dict[str, list[str]]] = [{"JWTAuth": []}]
API_KEY_HEADER = next(s["name"] for s in load_spec()["components"]["securitySchemes"].values() if s["type"] == "apiKey")


class MockApp(AsyncApp):  # type: ignore[misc]
    """The Connexion app, with the parts tests and the admin API reach into."""

    store: domain.Store
    sessions: Sessions
    realm: Realm
    journal: Journal
    faults: FaultRules
    violations: Violations
    settings: Settings
    backend_prefix: str
    gateway_prefix: str

    def __init__(self, import_name: str, **options: Any) -> None:
        super().__init__(import_name, **options)
        decorate_handlers_once(self)  # per operation, not per request (see mock_server.api.connexion_seam)

    bypass: Bypass | None = None  # past Connexion's outer layers and the control plane (control/bypass.py)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if self.bypass is not None and self.bypass.takes(scope):
            enter_as_connexion(self, scope)
            await self.bypass.serve(scope, receive, send)
            return
        note_connection(scope, send)  # for faults.hang_up and the dashboard's stream: the server's own `send`
        await super().__call__(scope, receive, send)


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


def operation_index(spec: Schema, backend_prefix: str, gateway_prefix: str) -> OperationIndex:
    """The spec's operations as each surface serves them: steering, faults and the journal name them so."""
    mounts = {
        "backend": (backend_prefix, list(spec["paths"])),
        "gateway": (gateway_prefix, list(gateway_spec(spec)["paths"])),
    }
    return OperationIndex(spec, mounts)


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


def unauthorized_detail(request: ConnexionRequest, detail: str) -> str:
    """Connexion's 401 text, said precisely where it reads "No authorization token provided": what
    this surface takes, and that the gateway does not take an API key."""
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
        case ProblemException():  # Connexion's own: security, media type
            detail = str(error.detail or error.title).split("\n")[0]
            if error.status == 401:
                detail = unauthorized_detail(request, detail)
            return problem_response(error.status, detail)
        case HTTPException():
            return problem_response(error.status_code, error.detail)
    log_unexpected(error)
    return problem_response(500, INTERNAL_ERROR)


def create_app(settings: Settings | None = None, dataset: domain.Dataset | None = None) -> MockApp:
    """A fresh mock: its realm and journal, and the store the settings select (`state.open_store`),
    seeded from `dataset`, else the settings' fixtures.

    Raises SpecError (one line) when the settings' spec lacks what the mock serves."""
    settings = settings or Settings()
    spec = load_spec(settings.spec)
    try:
        return _build(settings, spec, dataset)
    except (KeyError, IndexError, TypeError) as exc:  # a part of the spec the mock derives from is missing
        raise SpecError(f"the spec {settings.spec or 'bundled'} lacks what the mock needs: {exc!r}") from exc


def _build(settings: Settings, spec: Schema, dataset: domain.Dataset | None) -> MockApp:
    backend_prefix, gateway_prefix = mount_points(spec)
    quiet_content_type_note()
    validate_each_document_once()
    app = MockApp(__name__, swagger_ui_options=swagger_ui.options())
    app.settings = settings
    app.backend_prefix, app.gateway_prefix = backend_prefix, gateway_prefix
    app.store = open_store(settings, spec, dataset)  # the default state
    # what the parts below hold: the state of the request's session (session_scope), else the default
    store = ScopedStore(app.store)
    app.sessions = open_sessions(app.store, settings)
    # Redis: replicas share the realm's keys and its memory (logins, codes, sessions)
    memory = realm_memory(app.store, settings)
    app.realm = open_realm(settings, shared=getattr(app.store, "shared", None), memory=memory)

    readers, writers = operation_table(store, spec)
    handlers = handler_table(readers, writers)
    missing = sorted(
        operation["operationId"]
        for item in spec["paths"].values()
        for operation in item.values()
        if isinstance(operation, dict) and "operationId" in operation and operation["operationId"] not in handlers
    )
    if missing:
        raise SpecError(f"the spec has operations the mock does not implement: {', '.join(missing)}")
    api_keys = ApiKeys(settings.api_keys)
    options: dict[str, Any] = {
        "resolver": Resolver(function_resolver=handlers.__getitem__),
        "validator_map": validator_map(),
        "security_map": security_map(api_keys, app.realm),
        "validate_responses": settings.validate_responses,
        "uri_parser_class": BoundedURIParser,
    }
    app.add_api(copy.deepcopy(spec), base_path=backend_prefix, name="backend", **options)
    gateway = gateway_spec(spec)
    app.add_api(gateway, base_path=gateway_prefix, name="gateway", **options)
    index = operation_index(spec, backend_prefix, gateway_prefix)
    control = open_control(app.store, settings, index)  # a shared state: one of each for all its replicas
    app.journal, app.faults, app.violations = control.journal, control.faults, control.violations

    for exception in (MockError, domain.StoreError, PageNotFound, ProblemException, HTTPException, Exception):
        app.add_error_handler(exception, render_error)

    mounts = {backend_prefix: list(spec["paths"]), gateway_prefix: list(gateway["paths"])}
    routes = AllowHeader.table(spec, mounts)
    before_exception = MiddlewarePosition.BEFORE_EXCEPTION
    credentials = credential_checks(spec["components"]["securitySchemes"], api_keys, app.realm)

    def scratch() -> domain.Store:
        """A scratch copy of the request's current state, for a steered write's success."""
        return MemoryStore(record_fields(spec), store.export())

    # outermost: Faults owns the connection (it can close it) and journals what it answers itself
    app.add_middleware(LastResort, position=before_exception)
    path_templates = templates(spec, mounts)
    app.add_middleware(Faults, position=before_exception, rules=app.faults, journal=app.journal)
    app.add_middleware(RequestJournal, position=before_exception, journal=app.journal, unrecorded=ADMIN_PREFIX)
    app.add_middleware(
        AdminGuard,
        position=before_exception,
        enabled=settings.admin,
        token=settings.admin_token,
        bound_host=settings.host,
        shell=DASHBOARD_SHELL,
    )
    app.add_middleware(
        CORS,
        position=before_exception,
        allow_origins=list(settings.cors_origins),
        allow_methods=["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"],
        allow_headers=["Authorization", "Content-Type", "X-API-Key", SESSION_HEADER],
        expose_headers=["WWW-Authenticate", "Allow"],
    )
    # inside CORS (its headers on a refusal), outside everything that reads or writes the state
    app.add_middleware(SessionScope, position=before_exception, registry=app.sessions)
    app.add_middleware(RawPath, position=before_exception, templates=path_templates)
    if settings.proxy:  # the API's traffic to a real backend, checked; what it does not serve goes on (fallback)
        app.add_middleware(
            Proxy,
            position=before_exception,
            index=index,
            backend=BackendClient(settings.proxy, settings.proxy_timeout),
            violations=app.violations,
            fallback=settings.proxy_fallback,
            max_body_bytes=settings.max_body_bytes,
        )
    # inside CORS (its headers), outside the fast path, so that a steered request is never served plainly
    app.add_middleware(Steering, position=before_exception, index=index, scratch=scratch)
    if not settings.proxy:  # a request asking for no control feature comes in here (control/bypass.py)
        app.bypass = Bypass(app.faults, app.journal, left_as_sent(path_templates))
        app.add_middleware(app.bypass, position=before_exception)
    if settings.fast_path and not settings.validate_responses:
        # inside CORS and the journal (their headers and records), before the layers a valid request skips
        shortcuts = [
            *fast_routes(spec, backend_prefix, readers, writers, credentials),
            *fast_routes(gateway, gateway_prefix, readers, writers, credentials),
        ]
        app.add_middleware(
            FastPath, position=before_exception, routes=shortcuts, max_body_bytes=settings.max_body_bytes
        )
    # behind FastPath, which API requests do not get past
    documents = {backend_prefix: spec, gateway_prefix: gateway}
    ui_specs = {prefix: swagger_ui.ui_spec(doc, prefix, settings.api_keys) for prefix, doc in documents.items()}
    app.add_middleware(swagger_ui.UISpec, position=before_exception, documents=ui_specs)
    app.add_middleware(
        BodyLimit,
        position=before_exception,
        max_bytes=settings.max_body_bytes,
        api_prefixes=(f"{backend_prefix}/", f"{gateway_prefix}/"),
    )
    app.add_middleware(AllowHeader, position=before_exception, routes=routes)

    landing = Landing(backend_prefix, gateway_prefix, settings.api_keys)
    parts: list[Admin | Dashboard | Identity | Landing] = [Identity(app.realm), landing]
    if settings.admin:
        admin = Admin(store, app.journal, app.faults, app.violations, app.sessions, spec, control.per_replica)
        parts.append(admin)
        parts.append(Dashboard(app.journal))
    for part in parts:
        for method, path, endpoint in part.routes():
            app.add_url_rule(path, endpoint=endpoint.__name__, view_func=endpoint, methods=[method])
    return app
