"""The Swagger UI pages: "Try it out" on the page's own surface, and a login through the realm.

The contract stays as written at `{prefix}/openapi.json`. Each UI page is `{prefix}/ui/`, served by
Connexion from the offline bundle. It loads `{prefix}/ui/openapi.json` instead, a copy of its
surface's spec made for a browser. The copy differs in three ways:

- It has one server, the page's own mount point as a relative URL, and no path-level servers. Those
  carry the default `http://127.0.0.1:8000`, and on the gateway's page they pointed at the backend.
  So "Try it out" calls the host, port and surface the page came from.
- It has an `OAuth2` scheme (authorization code) at the realm's Keycloak paths. Swagger UI adds PKCE
  (see `options`). The paths are absolute URLs on the host the page was loaded from. The scheme is
  offered beside the spec's own schemes on every operation.
- It keeps only the schemes the surface takes, so the gateway's page has no API key. The API key's
  description names the dev key when the mock accepts it.

Only the UI's copy declares the `OAuth2` scheme, because it is the bearer token of `JWTAuth` obtained
another way. So backends are asked to accept nothing new.
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

UI_SPEC = "/ui/openapi.json"  # Under each surface's prefix. The page loads it by this relative name.
AUTHORIZATION_PATH = f"{REALM_PATH}/protocol/openid-connect/auth"
BROWSER_CLIENT = "shop-web"  # The realm's public client for browsers, with authorization code and PKCE.
OAUTH2 = "OAuth2"
METHODS = ("get", "put", "post", "patch", "delete")


def options() -> SwaggerUIOptions:
    """Connexion's UI options, so that the page loads its own spec copy and logs in with PKCE."""
    return SwaggerUIOptions(
        swagger_ui=True,
        swagger_ui_template_arguments={
            "openapi_spec_url": UI_SPEC.rsplit("/", 1)[1],  # Relative to the page, so {prefix}/ui/openapi.json.
            "initOAuth": {
                "clientId": BROWSER_CLIENT,
                "usePkceWithAuthorizationCodeGrant": True,
                "scopes": "openid",
            },
        },
    )


def ui_spec(spec: Schema, prefix: str, api_keys: frozenset[str]) -> Schema:
    """The copy of one surface's `spec` that its UI page loads. Its OAuth2 URLs are paths until served."""
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
    for name in set(schemes) - used:  # The gateway's page offers no API key, because the gateway refuses it.
        del schemes[name]
    return ui


def with_oauth2(requirements: list[dict[str, list[str]]], bearer: str) -> list[dict[str, list[str]]]:
    """`requirements`, with OAuth2 added wherever the bearer scheme alone is one."""
    return [*requirements, {OAUTH2: []}] if {bearer: []} in requirements else requirements


def served(ui: Schema, origin: str) -> bytes:
    """`ui` as served to a page loaded from `origin`, with the OAuth2 URLs made absolute there."""
    schemes = dict(ui["components"]["securitySchemes"])
    flow = schemes[OAUTH2]["flows"]["authorizationCode"]
    absolute = {**flow, "authorizationUrl": origin + flow["authorizationUrl"], "tokenUrl": origin + flow["tokenUrl"]}
    schemes[OAUTH2] = {**schemes[OAUTH2], "flows": {"authorizationCode": absolute}}
    document = {**ui, "components": {**ui["components"], "securitySchemes": schemes}}
    return json.dumps(document).encode()


class UISpec:
    """ASGI middleware that answers GET `{prefix}/ui/openapi.json` with that surface's UI copy."""

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
