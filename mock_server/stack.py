"""The mock's middleware, outermost first. `layers` is the one place that states their order.

Connexion runs them between its error middleware and its exception handlers, in the order of the
list. `install` puts them at `MiddlewarePosition.BEFORE_EXCEPTION`. The first, `Observe`, counts
every request. The layers from `LastResort` up to `Steering` are the control layers.

Without `--proxy`, `control.bypass.Bypass` wraps the control layers (`with_bypass`). So a request
asking for none of them goes straight from `Observe` to the layer after `Steering`. The app's entry
(`app.MockApp`) asks that layer first, as Connexion built it. It sends such a request through the
bypass alone, whose journal tells the `Observer` of it.

ARCHITECTURE.md lists the layers in this order, and tests/mock_server/test_stack.py holds the list
there to this one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from connexion import AsyncApp
from connexion.middleware import MiddlewarePosition
from starlette.middleware import Middleware

from mock_server.api.addressing import RawPath, Template, left_as_sent, templates
from mock_server.api.fastpath import FastPath, Route
from mock_server.backends import Control, replica_name
from mock_server.control import swagger_ui
from mock_server.control.admin import PREFIX as ADMIN_PREFIX
from mock_server.control.admin_guard import AdminGuard
from mock_server.control.backend_client import BackendClient
from mock_server.control.bypass import Bypass
from mock_server.control.dashboard.page import SHELL as DASHBOARD_SHELL
from mock_server.control.faults.middleware import Faults
from mock_server.control.journal.middleware import RequestJournal
from mock_server.control.metrics import MetricsRoute
from mock_server.control.mock_sessions.registry import HEADER as SESSION_HEADER
from mock_server.control.mock_sessions.registry import Sessions
from mock_server.control.mock_sessions.scope import ScopedStore, SessionScope
from mock_server.control.observe import Observe, Observer
from mock_server.control.probes import Probes
from mock_server.control.proxy import Proxy
from mock_server.control.steering import Steering
from mock_server.http.cors import CORS
from mock_server.http.middleware import AllowHeader, BodyLimit, LastResort, SlashRedirect
from mock_server.settings import Settings
from mock_server.spec.operations import OperationIndex
from mock_server.state.fixtures import record_fields
from mock_server.state.memory import MemoryStore
from mock_server.state.store import Store
from mock_server.surfaces import Surfaces


# Seven parameters because: each layer takes its own piece of what app.py composed, and this is where they meet.
def layers(
    settings: Settings,
    surfaces: Surfaces,
    index: OperationIndex,
    control: Control,
    sessions: Sessions,
    store: ScopedStore,
    shortcuts: list[Route] | None,
) -> list[Middleware]:
    """Every layer, outermost first. `shortcuts` are the fast path's routes, or None for no fast path."""
    path_templates = templates(surfaces.spec, surfaces.mounts())
    routes = AllowHeader.table(surfaces.spec, surfaces.mounts())

    def scratch() -> Store:
        """A scratch copy of the request's current state, for a steered write's success."""
        return MemoryStore(record_fields(surfaces.spec), store.export())

    proxy = (
        [
            Middleware(
                Proxy,
                index=index,
                backend=BackendClient(settings.proxy, settings.proxy_timeout),
                violations=control.violations,
                fallback=settings.proxy_fallback,
                max_body_bytes=settings.max_body_bytes,
            )
        ]
        if settings.proxy
        else []
    )
    fast_path = (
        [] if shortcuts is None else [Middleware(FastPath, routes=shortcuts, max_body_bytes=settings.max_body_bytes)]
    )
    ui_specs = {
        prefix: swagger_ui.ui_spec(doc, prefix, settings.api_keys) for prefix, doc in surfaces.documents().items()
    }
    log_requests = settings.log_format == "json"
    observer = Observer(index, count=settings.metrics, log_requests=log_requests, replica=replica_name(settings))
    observe = [Middleware(Observe, observer=observer)] if settings.metrics or log_requests else []
    return [
        # Outside the bypass, so that every request is counted and timed, a plain one too.
        *observe,
        Middleware(LastResort),
        # Before the guard, since an orchestrator's probe has no token and the pod's address as its Host.
        Middleware(Probes, ready=control.ready),
        # Faults owns the connection, so it can close it. It journals what it answers itself.
        Middleware(Faults, rules=control.faults, journal=control.journal),
        Middleware(RequestJournal, journal=control.journal, unrecorded=ADMIN_PREFIX),
        Middleware(
            AdminGuard,
            enabled=settings.admin,
            token=settings.admin_token,
            bound_host=settings.host,
            shell=DASHBOARD_SHELL,
            allowed_hosts=settings.allowed_hosts,
        ),
        Middleware(MetricsRoute, sessions=sessions, journal=control.journal, enabled=settings.metrics),
        Middleware(
            CORS,
            allow_origins=list(settings.cors_origins),
            allow_methods=["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"],
            allow_headers=["Authorization", "Content-Type", "X-API-Key", SESSION_HEADER],
            expose_headers=["WWW-Authenticate", "Allow"],
        ),
        # Inside CORS, so that a refusal has its headers. Outside every layer that reads the state.
        Middleware(SessionScope, registry=sessions),
        Middleware(RawPath, templates=path_templates),
        # With --proxy, the API's traffic goes to a real backend, checked.
        *proxy,
        # Outside the fast path, so that a steered request is never served plainly.
        Middleware(Steering, index=index, scratch=scratch),
        *fast_path,
        # Behind the fast path, which the API's valid requests do not get past.
        Middleware(swagger_ui.UISpec, documents=ui_specs),
        Middleware(
            BodyLimit,
            max_bytes=settings.max_body_bytes,
            api_prefixes=(f"{surfaces.backend_prefix}/", f"{surfaces.gateway_prefix}/"),
        ),
        Middleware(AllowHeader, routes=routes),
        Middleware(SlashRedirect, routes=routes),
    ]


def with_bypass(entries: list[Middleware], control: Control) -> list[Middleware]:
    """The same layers, with the control layers (from `LastResort` up to `Steering`) wrapped in a `Bypass`.

    The proxy must see every request, so a stack with a `Proxy` is left whole. The bypass takes only
    a path that the `RawPath` layer would leave as sent, so it reads that layer's templates.
    """
    classes: list[object] = [entry.cls for entry in entries]
    if Proxy in classes:
        return entries
    first, rejoin = classes.index(LastResort), 1 + classes.index(Steering)
    path_templates = cast("list[Template]", entries[classes.index(RawPath)].kwargs["templates"])
    as_sent = left_as_sent(path_templates)
    observer = cast("Observer", entries[0].kwargs["observer"]).done if Observe in classes else None
    bypass = Middleware(
        Bypass,
        control=entries[first:rejoin],
        rules=control.faults,
        journal=control.journal,
        as_sent=as_sent,
        observer=observer,
    )
    return [*entries[:first], bypass, *entries[rejoin:]]


def install(app: AsyncApp, entries: Sequence[Middleware]) -> None:
    """Hand `entries` to Connexion in their order, inside its error middleware."""
    for entry in entries:
        app.add_middleware(entry.cls, position=MiddlewarePosition.BEFORE_EXCEPTION, **entry.kwargs)
