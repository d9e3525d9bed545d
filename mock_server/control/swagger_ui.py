"""The Swagger UI pages: "Try it out" on the page's own surface, and a login through the realm.

The contract stays as written at `{prefix}/openapi.json`. Each UI page (`{prefix}/ui/`, served by
Connexion from the offline bundle) loads instead `{prefix}/ui/openapi.json`, a copy of its surface's
spec made for a browser:

- one server, the page's own mount point as a relative URL, and no path-level servers (those carry
  the default `http://127.0.0.1:8000`, and on the gateway's page they pointed at the backend), so
  "Try it out" calls the host, port and surface the page came from;
- an `OAuth2` scheme (authorization code; Swagger UI adds PKCE, see `options`) at the realm's
  Keycloak paths, as absolute URLs on the host the page was loaded from, offered beside the spec's
  own schemes on every operation. Only the UI's copy declares it: it is the bearer token of
  `JWTAuth` obtained another way, and backends are asked to accept nothing new;
- only the schemes the surface takes (no API key on the gateway's page), the API key's description
  naming the dev key when the mock accepts it.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from connexion.options import SwaggerUIOptions
from starlette.types import ASGIApp, Receive, Scope, Send

from mock_server.api.handlers import public_url
from mock_server.api.security import REALM_PATH, TOKEN_PATH
from mock_server.settings import DEFAULT_API_KEY
from mock_server.spec.schemas import Schema

UI_SPEC = "/ui/openapi.json"  # under each surface's prefix; the page loads it by this relative name
AUTHORIZATION_PATH = f"{REALM_PATH}/protocol/openid-connect/auth"
BROWSER_CLIENT = "shop-web"  # the realm's public client for browsers (authorization code + PKCE)
OAUTH2 = "OAuth2"
METHODS = ("get", "put", "post", "patch", "delete")


def options() -> SwaggerUIOptions:
    """Connexion's UI options: the page loads its own spec copy and logs in with PKCE."""
    return SwaggerUIOptions(
        swagger_ui=True,
        swagger_ui_template_arguments={
            "openapi_spec_url": UI_SPEC.rsplit("/", 1)[1],  # relative to the page: {prefix}/ui/openapi.json
            "initOAuth": {
                "clientId": BROWSER_CLIENT,
                "usePkceWithAuthorizationCodeGrant": True,
                "scopes": "openid",
            },
        },
    )


def ui_spec(spec: Schema, prefix: str, api_keys: frozenset[str]) -> Schema:
    """The copy of `spec` (one surface's) that its UI page loads; OAuth2 URLs are paths until served."""
    ui = copy.deepcopy(spec)
    ui["servers"] = [{"url": prefix, "description": "This mock, on the host and port the page came from."}]
    schemes = ui["components"]["securitySchemes"]
    bearer = next(name for name, scheme in schemes.items() if scheme.get("scheme") == "bearer")
    schemes[OAUTH2] = {
        "type": "oauth2",
        "description": (
            f"Log in through the mock's identity realm (authorization code with PKCE, client `{BROWSER_CLIENT}`): "
            f"the same bearer token as `{bearer}`. Declared only in the UI's copy of the spec."
        ),
        "flows": {
            "authorizationCode": {
                "authorizationUrl": AUTHORIZATION_PATH,
                "tokenUrl": TOKEN_PATH,
                "scopes": {"openid": "OpenID Connect: an id_token beside the access token."},
            }
        },
    }
    if DEFAULT_API_KEY in api_keys:
        for scheme in schemes.values():
            if scheme["type"] == "apiKey":
                scheme["description"] += f" The mock accepts the dev key `{DEFAULT_API_KEY}`."
    ui["security"] = with_oauth2(ui.get("security", []), bearer)
    used = {name for requirement in ui["security"] for name in requirement}
    for item in ui["paths"].values():
        item.pop("servers", None)
        for method in METHODS:
            if "security" in item.get(method, {}):
                item[method]["security"] = with_oauth2(item[method]["security"], bearer)
                used.update(name for requirement in item[method]["security"] for name in requirement)
    for name in set(schemes) - used:  # the gateway's page offers no API key: the gateway refuses it
        del schemes[name]
    return ui


def with_oauth2(requirements: list[dict[str, list[str]]], bearer: str) -> list[dict[str, list[str]]]:
    """`requirements`, and OAuth2 wherever the bearer scheme alone is one."""
    return [*requirements, {OAUTH2: []}] if {bearer: []} in requirements else requirements


def served(ui: Schema, origin: str) -> bytes:
    """`ui` as served to a page loaded from `origin`: the OAuth2 URLs made absolute there."""
    schemes = dict(ui["components"]["securitySchemes"])
    flow = schemes[OAUTH2]["flows"]["authorizationCode"]
    absolute = {**flow, "authorizationUrl": origin + flow["authorizationUrl"], "tokenUrl": origin + flow["tokenUrl"]}
    schemes[OAUTH2] = {**schemes[OAUTH2], "flows": {"authorizationCode": absolute}}
    document = {**ui, "components": {**ui["components"], "securitySchemes": schemes}}
    return json.dumps(document).encode()


class UISpec:
    """ASGI middleware: GET `{prefix}/ui/openapi.json` answered with that surface's UI copy."""

    def __init__(self, app: ASGIApp, documents: Mapping[str, Schema]) -> None:
        self.app = app
        self.documents = {prefix + UI_SPEC: ui for prefix, ui in documents.items()}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        ui: Any = self.documents.get(scope["path"]) if scope["type"] == "http" else None
        if ui is None or scope["method"] not in ("GET", "HEAD"):
            await self.app(scope, receive, send)
            return
        scheme, host, *_ = urlsplit(public_url(scope))
        body = served(ui, f"{scheme}://{host}")
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body if scope["method"] == "GET" else b""})
