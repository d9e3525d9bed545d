"""Building what is under test (client/under_test.py): one or two surfaces, each a base URL with its credentials.

Tests never branch on the target. They iterate over its surfaces. Building a target fetches the token,
forges the refused ones, and proves each surface answers and accepts its credentials. So a run that
cannot work stops before testing anything.

This is where the client's pieces meet, so that none of them imports another. The options make the
limits: deadline, size, trust and pacer. The keyring gets its token fetcher, `auth.fetch_token` under
those limits, its deadline at least the default (`realm_limits`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import TypeVar

import httpx

from contract_tests.client.auth import (
    TokenEndpointUnreachable,
    fetch_token,
    forged_tokens,
    realm_public_key,
)
from contract_tests.client.bodies import lenient_json
from contract_tests.client.bounded import Limits, ResponseTooLarge, Trust
from contract_tests.client.bounded_httpx import httpx_client, send_httpx
from contract_tests.client.keyring import CredentialsLost, Keyring, Realm
from contract_tests.client.pacing import Pacer
from contract_tests.client.surface import Surface
from contract_tests.client.under_test import Credentials, Target
from contract_tests.options import DEFAULT_DEADLINE, Options
from contract_tests.redact import bounded, escape
from contract_tests.spec import Operation, Spec
from contract_tests.usage import UsageError
from shop_contract.document import SpecError

T = TypeVar("T")
WAIT_STEP = 0.5
"""Seconds between two probes of a target that is still starting (`--wait`)."""


class TargetError(Exception):
    """The target cannot be tested. It is unreachable, not this API, or it refuses the given credentials."""


class Unreached(TargetError):
    """No answer yet, so it is worth probing again while `--wait` lasts."""


def _refused(credentials: Credentials, forged: dict[str, str]) -> dict[str, dict[str, str]]:
    refused: dict[str, dict[str, str]] = {"no_credentials": {}, "wrong_api_key": {"X-API-Key": "wrong-key"}}
    refused.update({name: {"Authorization": f"Bearer {token}"} for name, token in forged.items()})
    return refused


def limits_of(options: Options) -> Limits:
    """How the run's requests are sent. The limits hold `--request-timeout`, `--max-response-size`, the TLS
    trust (`--ca-bundle`, `--insecure`) and a pacer for `--workers`."""
    trust = Trust(options.ca_bundle, options.insecure)
    return Limits(options.request_timeout, options.max_response_size, trust, Pacer(options.workers or 1))


def realm_limits(limits: Limits) -> Limits:
    """The limits of a request to the realm (its token, its keys): the run's, with a deadline of at least the
    default. `--request-timeout` judges the target's answers. A realm slower than a strict one is no
    violation, and with the run's deadline it stopped the run before it began (exit 2, "timed out")."""
    return replace(limits, deadline=max(limits.deadline, DEFAULT_DEADLINE))


def _keyring(options: Options, limits: Limits) -> Keyring:
    realm = None
    if options.token_url and options.client_id and options.client_secret:
        realm = Realm(options.token_url, options.client_id, options.client_secret)
    try:
        return Keyring(options.api_key, options.token, realm, partial(fetch_token, limits=realm_limits(limits)))
    except CredentialsLost as exc:
        if isinstance(exc.__cause__, TokenEndpointUnreachable):
            raise Unreached(str(exc)) from exc
        raise TargetError(str(exc)) from exc


def never_stopped() -> str | None:
    """The `stopped` of a command that installs no signal handlers: nothing ends its wait early."""
    return None


def build_target(options: Options, spec: Spec, stopped: Callable[[], str | None] = never_stopped) -> Target:
    """Resolve credentials and surfaces, and check each surface answers and accepts them.

    `stopped()` is why the run was stopped (a signal), or None. `--wait` ends at it, not at its end."""
    give_up = time.monotonic() + waiting_time(options)
    limits = limits_of(options)
    keyring = _waiting(give_up, partial(_keyring, options, limits), stopped)
    try:
        token = keyring.token
    except CredentialsLost as exc:
        raise TargetError(str(exc)) from exc
    credentials = Credentials(api_key=options.api_key, token=token)
    public_key = realm_public_key(token, options.token_url, realm_limits(limits))
    refused = _refused(credentials, forged_tokens(token, public_key))
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
        _waiting(give_up, partial(_probe, surface, spec, limits, keyring), stopped)
    return Target(tuple(surfaces), credentials, keyring, limits)


def waiting_time(options: Options) -> float:
    """Seconds to wait for a target still starting. It is `--wait`, but never past the `--max-time` budget.

    The budget counts from the run's start. No request starts once it is spent, not even the first probes."""
    return options.wait if options.max_time is None else min(options.wait, options.max_time)


def _probe_operation(surface: Surface, spec: Spec) -> Operation:
    candidates = [op for op in spec.lists if not op.path_parameters]
    gateway_ids = {op.id for op in spec.gateway_operations}
    on_surface = [op for op in candidates if surface.name == "backend" or op.id in gateway_ids]
    if not on_surface:
        raise SpecError(f"the spec has no list without path parameters on the {surface.name} to probe it with")
    return on_surface[0]


def _waiting(give_up: float, attempt: Callable[[], T], stopped: Callable[[], str | None]) -> T:
    """`attempt()`, again every WAIT_STEP seconds while it raises Unreached, the last one at `give_up`.

    The wait is the whole of `--wait`: a target up in its last half second is still found. A signal ends
    it within a step (a sleep resumes after its handler): a process manager's SIGTERM is not held for
    the rest of `--wait`."""
    while True:
        try:
            return attempt()
        except Unreached as exc:
            reason = stopped()
            if reason is not None:
                raise TargetError(f"{reason} while waiting for the target: {exc}") from exc
            left = give_up - time.monotonic()
            if left <= 0:
                raise
            time.sleep(min(WAIT_STEP, left))


def _probe(surface: Surface, spec: Spec, limits: Limits, keyring: Keyring) -> None:
    op = _probe_operation(surface, spec)
    url = surface.url(op.path)
    with httpx_client(limits) as client:
        request = client.build_request("GET", url, headers=keyring.current(surface.headers))
        try:
            response = send_httpx(client, request, limits)
        except (httpx.HTTPError, ResponseTooLarge) as exc:
            raise Unreached(
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
    if response.status_code in (502, 503, 504):
        raise Unreached(f"the {surface.name} at {surface.base_url} is not ready (HTTP {response.status_code})")
    if 200 <= response.status_code < 300 and not _is_this_api(spec, op, response):
        kind = bounded(escape(response.headers.get("content-type", "no content type").split(";")[0]), 100)
        raise TargetError(
            f"the {surface.name} at {surface.base_url} does not serve this API: GET {op.path} answered "
            f"HTTP {response.status_code} {kind} that is not the contract's list (wrong URL?)"
        )


def _is_this_api(spec: Spec, op: Operation, response: httpx.Response) -> bool:
    """A JSON object holding every property the contract's 200 answer requires."""
    schema = op.definition.get("responses", {}).get("200", {}).get("content", {}).get("application/json", {})
    required = schema.get("schema", {}).get("required", [])
    try:  # Read as a lax client reads it. A body in another charset is still this API, judged later.
        body = lenient_json(response.content, response.headers.get("content-type"))
    except (ValueError, RecursionError):  # A RecursionError is a body nested too deep to parse.
        return False
    return isinstance(body, dict) and all(name in body for name in required)
