"""What is under test: one or two surfaces (backend, gateway), each a base URL with its credentials.

Tests never branch on the target; they iterate over its surfaces. Building a target fetches the token,
forges the refused ones, and proves each surface answers and accepts its credentials, so a run that
cannot work stops before testing anything.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import httpx

from contract_tests.auth import Credentials, CredentialsError, fetch_token, forged_tokens, realm_public_key
from contract_tests.options import Options, UsageError
from contract_tests.spec import Operation, Spec


class TargetError(Exception):
    """The target cannot be tested: unreachable, or it refuses the given credentials."""


@dataclass(frozen=True)
class Surface:
    """A mount point of the interface and what the suite sends there."""

    name: str
    base_url: str
    operations: tuple[str, ...]
    """Every operation served there; `--include` narrows what is tested, not what can be called."""
    headers: dict[str, str]
    """The credentials every conformance request carries."""
    accepted: dict[str, dict[str, str]]
    """Each credential that must be accepted on its own, by name."""
    refused: dict[str, dict[str, str]] = field(default_factory=dict)
    """Each credential that must be refused, by name."""

    def url(self, path: str) -> str:
        return self.base_url.rstrip("/") + path


@dataclass(frozen=True)
class Target:
    surfaces: tuple[Surface, ...]
    credentials: Credentials

    def surface(self, name: str) -> Surface | None:
        return next((surface for surface in self.surfaces if surface.name == name), None)


def _refused(credentials: Credentials, forged: dict[str, str]) -> dict[str, dict[str, str]]:
    refused: dict[str, dict[str, str]] = {"no_credentials": {}, "wrong_api_key": {"X-API-Key": "wrong-key"}}
    refused.update({name: {"Authorization": f"Bearer {token}"} for name, token in forged.items()})
    return refused


def build_target(options: Options, spec: Spec) -> Target:
    """Resolve credentials and surfaces, and check each surface answers and accepts them."""
    token = options.token
    try:
        if options.token_url and options.client_id and options.client_secret:
            token = fetch_token(options.token_url, options.client_id, options.client_secret, options.request_timeout)
    except CredentialsError as exc:
        raise TargetError(str(exc)) from exc
    credentials = Credentials(api_key=options.api_key, token=token)
    refused = _refused(credentials, forged_tokens(token, realm_public_key(token, options.token_url)))
    surfaces = []
    if options.base_url is not None:
        if credentials.api_key is None and credentials.token is None:
            raise UsageError("the backend needs credentials: --api-key, --token or --token-url")
        accepted = {
            name: headers
            for name, headers in (("api_key", credentials.api_key_headers()), ("bearer", credentials.bearer_headers()))
            if headers
        }
        operations = tuple(spec.operations)
        headers = credentials.api_key_headers() or credentials.bearer_headers()
        surfaces.append(Surface("backend", options.base_url, operations, headers, accepted, refused))
    if options.gateway_url is not None:
        if credentials.token is None:
            raise UsageError("the gateway needs a bearer token: --token or --token-url")
        gateway_refused = dict(refused)
        if credentials.api_key is not None:
            gateway_refused["api_key_alone"] = credentials.api_key_headers()
        operations = tuple(op.id for op in spec.gateway_operations)
        bearer = credentials.bearer_headers()
        surfaces.append(
            Surface("gateway", options.gateway_url, operations, bearer, {"bearer": bearer}, gateway_refused)
        )
    for surface in surfaces:
        _probe(surface, spec, options.request_timeout)
    return Target(tuple(surfaces), credentials)


def _probe_operation(surface: Surface, spec: Spec) -> Operation:
    candidates = [op for op in spec.lists if not op.path_parameters]
    gateway_ids = {op.id for op in spec.gateway_operations}
    on_surface = [op for op in candidates if surface.name == "backend" or op.id in gateway_ids]
    return on_surface[0]


def _probe(surface: Surface, spec: Spec, timeout: float) -> None:
    op = _probe_operation(surface, spec)
    url = surface.url(op.path)
    try:
        response = httpx.get(url, headers=surface.headers, timeout=timeout)
    except httpx.HTTPError as exc:
        raise TargetError(
            f"cannot reach the {surface.name} at {surface.base_url}: {exc or type(exc).__name__}"
        ) from exc
    if response.status_code in (401, 403):
        kinds = " and ".join(surface.accepted)
        raise TargetError(
            f"the {surface.name} refused the {kinds} credentials (HTTP {response.status_code} on GET {url})"
        )
    if response.status_code == 404:
        raise TargetError(
            f"the {surface.name} has no {op.path} under {surface.base_url} (HTTP 404): wrong mount point?"
        )
