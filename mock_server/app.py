"""The mock's composition: `create_app(settings)` builds a fresh mock in four steps.

`_open_state` opens the store, the test sessions over it and the realm. `_add_apis` gives Connexion
the two surfaces, the backend and the gateway, and the one error renderer (`rendering.py`). The
spec drives their routing, security and validation, and `routing.handler_table` gives each
operation its handler. `backends.py` opens the control plane, and `stack.layers` states the order of
its layers. `_add_routes` adds the plain routes beside the API. They are the admin API and its
dashboard under /__mock__, the realm under /realms/shop, and the landing page.

`MockApp` is the entry of every request. Connexion's entry and its error middleware do nothing for
a request that asks for no control feature, yet passing them costs time (control/bypass.py). So the
entry lets the `Bypass` layer serve such a request itself. It can find that layer only once
Connexion has built its stack, which happens on the first call (`connexion_seam.built_layers`).
"""

from __future__ import annotations

from typing import Any

from connexion import AsyncApp
from connexion.resolver import Resolver
from starlette.middleware import Middleware

from mock_server.api.addressing import BoundedURIParser
from mock_server.api.connexion_seam import (
    build_each_document_once,
    built_layers,
    decorate_handlers_once,
    enter_as_connexion,
    quiet_content_type_note,
    validate_each_document_once,
)
from mock_server.api.fastpath import Route, fast_routes
from mock_server.api.routing import handler_table, operation_table
from mock_server.api.security import ApiKeys
from mock_server.api.validation import validator_map
from mock_server.backends import Control, open_control, open_sessions, open_store, realm_memory
from mock_server.control import swagger_ui
from mock_server.control.admin import Admin
from mock_server.control.bypass import Bypass
from mock_server.control.dashboard.page import Dashboard
from mock_server.control.faults.connection import note_connection
from mock_server.control.faults.memory import FaultRules
from mock_server.control.journal.base import Journal
from mock_server.control.landing import Landing
from mock_server.control.mock_sessions.registry import Sessions
from mock_server.control.mock_sessions.scope import ScopedStore
from mock_server.control.violations.memory import Violations
from mock_server.realm import Realm, open_realm
from mock_server.realm.identity import Identity
from mock_server.rendering import HANDLED, render_error
from mock_server.settings import Settings
from mock_server.spec.schemas import Schema, load_spec
from mock_server.stack import install, layers, with_bypass
from mock_server.state import store as domain
from mock_server.surfaces import Surfaces, credential_checks, operation_index, security_map
from shop_contract.document import SpecError


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
    layers: list[Middleware]  # In the order of `stack.layers`, before the bypass wraps the control layers.
    bypass: Bypass | None = None  # The `Bypass` layer that Connexion built, if there is one.
    built = False  # Whether Connexion has built its stack, so that `bypass` was looked for.

    def __init__(self, import_name: str, **options: Any) -> None:
        super().__init__(import_name, **options)
        decorate_handlers_once(self)  # Once per operation, not per request (mock_server.api.connexion_seam).

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if not self.built:
            self._find_bypass()
        bypass = self.bypass
        if bypass is not None and bypass.takes(scope):
            enter_as_connexion(self, scope)
            await bypass.serve(scope, receive, send)
            return
        note_connection(scope, send)  # It needs the server's own `send`, before Connexion's middleware wraps it.
        await super().__call__(scope, receive, send)

    def _find_bypass(self) -> None:
        """Look for the `Bypass` layer in Connexion's stack, once there is one.

        Until then every request enters Connexion, and the layer decides there."""
        layers = built_layers(self)
        if layers is not None:
            self.bypass = next((layer for layer in layers if isinstance(layer, Bypass)), None)
            self.built = True


def create_app(settings: Settings | None = None, dataset: domain.Dataset | None = None) -> MockApp:
    """A fresh mock, with the store the settings select (`backends.open_store`).

    The store is seeded from `dataset`, else from the settings' fixtures. Raises a one-line SpecError
    when the settings' spec lacks what the mock serves."""
    settings = settings or Settings()
    spec = load_spec(settings.spec)
    try:
        return _build(settings, spec, dataset)
    except (KeyError, IndexError, TypeError) as exc:  # A part of the spec the mock derives from is missing.
        raise SpecError(f"the spec {settings.spec or 'bundled'} lacks what the mock needs: {exc!r}") from exc


def _build(settings: Settings, spec: Schema, dataset: domain.Dataset | None) -> MockApp:
    surfaces = Surfaces.of(spec)
    quiet_content_type_note()
    validate_each_document_once()
    build_each_document_once()
    app = MockApp(__name__, swagger_ui_options=swagger_ui.options())
    app.settings = settings
    app.backend_prefix, app.gateway_prefix = surfaces.backend_prefix, surfaces.gateway_prefix
    store = _open_state(app, settings, spec, dataset)
    shortcuts = _add_apis(app, settings, surfaces, store)
    index = operation_index(spec, surfaces.backend_prefix, surfaces.gateway_prefix)
    control = open_control(app.store, settings, index)  # With a shared store, one of each serves all the replicas.
    app.journal, app.faults, app.violations = control.journal, control.faults, control.violations
    app.layers = layers(settings, surfaces, index, control, app.sessions, store, shortcuts)
    install(app, with_bypass(app.layers, control))
    _add_routes(app, settings, spec, store, control)
    return app


def _open_state(app: MockApp, settings: Settings, spec: Schema, dataset: domain.Dataset | None) -> ScopedStore:
    """Set the default store, the test sessions over it and the realm on `app`.

    The layers and the handlers hold the returned `ScopedStore`. It serves the state of the
    request's session, else the default state."""
    app.store = open_store(settings, spec, dataset)
    app.sessions = open_sessions(app.store, settings)
    # With Redis, the replicas share the realm's keys and its memory of logins, codes and sessions.
    memory = realm_memory(app.store, settings)
    app.realm = open_realm(settings, shared=getattr(app.store, "shared", None), memory=memory)
    return ScopedStore(app.store)


def _add_apis(app: MockApp, settings: Settings, surfaces: Surfaces, store: ScopedStore) -> list[Route] | None:
    """Give Connexion both surfaces and the error renderer.

    Returns the fast path's routes, which use the same handlers and credential checks. Returns None
    when the fast path is off, or when responses are validated, which the fast path does not do."""
    readers, writers = operation_table(store, surfaces.spec)
    handlers = handler_table(readers, writers)
    missing = sorted(
        operation["operationId"]
        for item in surfaces.spec["paths"].values()
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
    app.add_api(surfaces.spec, base_path=surfaces.backend_prefix, name="backend", **options)
    app.add_api(surfaces.gateway, base_path=surfaces.gateway_prefix, name="gateway", **options)
    for exception in HANDLED:
        app.add_error_handler(exception, render_error)
    if not settings.fast_path or settings.validate_responses:
        return None
    credentials = credential_checks(surfaces.spec["components"]["securitySchemes"], api_keys, app.realm)
    return [
        route
        for prefix, document in surfaces.documents().items()
        for route in fast_routes(document, prefix, readers, writers, credentials)
    ]


def _add_routes(app: MockApp, settings: Settings, spec: Schema, store: ScopedStore, control: Control) -> None:
    """Add the plain routes beside the API: the realm, the landing page, and the admin API with its dashboard."""
    landing = Landing(app.backend_prefix, app.gateway_prefix, settings.api_keys)
    parts: list[Admin | Dashboard | Identity | Landing] = [Identity(app.realm), landing]
    if settings.admin:
        admin = Admin(store, app.journal, app.faults, app.violations, app.sessions, spec, control.per_replica)
        parts.append(admin)
        parts.append(Dashboard(app.journal))
    for part in parts:
        for method, path, endpoint in part.routes():
            app.add_url_rule(path, endpoint=endpoint.__name__, view_func=endpoint, methods=[method])
