"""The spec as the mock serves it: the backend and the gateway, each at its mount point.

The gateway serves the customers operations only, behind a bearer token. Connexion, the fast
path, steering, faults and the journal all take the two surfaces from here, so that they agree on
which operation a request is.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from mock_server.api.connexion_seam import ApiKeyHandler, BearerHandler
from mock_server.api.fastpath import Credential, api_key_credential, bearer_credential
from mock_server.api.security import ApiKeys
from mock_server.realm import Realm
from mock_server.spec.operations import OperationIndex
from mock_server.spec.schemas import Schema, load_spec, mount_points

BACKEND_PREFIX, GATEWAY_PREFIX = mount_points(load_spec())  # The bundled spec's. An app has its own.
GATEWAY_SECURITY: list[dict[str, list[str]]] = [{"JWTAuth": []}]


_SURFACES: dict[int, tuple[Schema, Surfaces]] = {}


@dataclass(frozen=True)
class Surfaces:
    """The served spec and the gateway's copy of it, with the path each is mounted under."""

    spec: Schema
    gateway: Schema
    backend_prefix: str
    gateway_prefix: str

    @classmethod
    def of(cls, spec: Schema) -> Surfaces:
        """The surfaces of `spec`, made once per spec: a spec is read-only, and Connexion's specification of
        each document is built once and shared (`connexion_seam.build_each_document_once`), known by its
        identity. The entry holds its spec, so that the `id` it is found by stays that spec's."""
        kept = _SURFACES.get(id(spec))
        if kept is None or kept[0] is not spec:
            backend_prefix, gateway_prefix = mount_points(spec)
            kept = _SURFACES[id(spec)] = (spec, cls(spec, gateway_spec(spec), backend_prefix, gateway_prefix))
        return kept[1]

    def documents(self) -> dict[str, Schema]:
        """Each surface's document by its mount point."""
        return {self.backend_prefix: self.spec, self.gateway_prefix: self.gateway}

    def mounts(self) -> dict[str, list[str]]:
        """Each surface's path templates by its mount point."""
        return {prefix: list(document["paths"]) for prefix, document in self.documents().items()}


def gateway_paths(spec: Schema) -> list[str]:
    """The path templates the gateway serves: the customers operations, which name their own server."""
    return [path for path, item in spec["paths"].items() if "servers" in item]


def gateway_spec(spec: Schema) -> Schema:
    """The customers operations only, as the gateway serves them, with a bearer token required."""
    gateway = copy.deepcopy(spec)
    gateway["paths"] = {path: gateway["paths"][path] for path in gateway_paths(spec)}
    for item in gateway["paths"].values():
        for operation in item.values():
            if isinstance(operation, dict) and "operationId" in operation:
                operation["security"] = GATEWAY_SECURITY
    gateway["security"] = GATEWAY_SECURITY
    return gateway


_INDEXES: dict[tuple[int, str, str], tuple[Schema, OperationIndex]] = {}


def operation_index(spec: Schema, backend_prefix: str, gateway_prefix: str) -> OperationIndex:
    """The spec's operations as each surface serves them, since steering, faults and the journal name them so.

    Built once per spec and mount points, since a spec is read-only (`load_spec` caches it) and an index
    dereferences every operation: 10 ms, a quarter of a fresh mock's start. The entry holds its spec, so
    the `id` it is found by stays that spec's."""
    key = (id(spec), backend_prefix, gateway_prefix)
    kept = _INDEXES.get(key)
    if kept is None:
        mounts = {"backend": (backend_prefix, list(spec["paths"])), "gateway": (gateway_prefix, gateway_paths(spec))}
        kept = _INDEXES[key] = (spec, OperationIndex(spec, mounts))
    return kept[1]


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
    """The spec's schemes, by name, as `FastPath` checks them, with the same functions as `security_map`'s."""
    checks = {}
    for name, scheme in schemes.items():
        if scheme["type"] == "apiKey" and scheme["in"] == "header":
            checks[name] = api_key_credential(scheme["name"], api_keys.accepts)
        elif scheme["type"] == "http" and scheme["scheme"] == "bearer":
            checks[name] = bearer_credential(realm.verify)
    return checks
