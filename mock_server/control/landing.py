"""`GET /`, a small HTML page that says what this server is and links to everything it serves.

A person who opens the mock's address in a browser lands here instead of a JSON 404. The page links
the Swagger UI, both surfaces, the dev realm's discovery document, the dashboard and the admin API. It
also shows the dev credentials.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from html import escape
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from mock_server.api.security import DEV_CLIENT_ID, DEV_CLIENT_SECRET, DEV_PASSWORD, DEV_USERNAME, REALM_PATH
from mock_server.control.admin import PREFIX as ADMIN_PREFIX

Endpoint = Callable[[Request], Any]


def page(backend: str, gateway: str, api_keys: Iterable[str]) -> str:
    links = [
        (f"{backend}/ui/", "Swagger UI", "the contract, browsable and callable"),
        (f"{backend}/openapi.json", "OpenAPI document", "the spec this mock serves"),
        (f"{backend}/productlines/", "backend", f"{backend}/: every operation, API key or bearer token"),
        (f"{gateway}/customers/", "gateway", f"{gateway}/: the customers operations, bearer token only"),
        (f"{REALM_PATH}/.well-known/openid-configuration", "identity realm", "OpenID Connect discovery"),
        (f"{ADMIN_PREFIX}/ui/", "dashboard", "live requests, state, sessions, fault rules, Prefer steering"),
        (f"{ADMIN_PREFIX}/health", "admin API", f"{ADMIN_PREFIX}/: health, reset, state, requests"),
    ]
    items = "\n".join(
        f'<li><a href="{escape(href)}">{escape(name)}</a>: {escape(what)}</li>' for href, name, what in links
    )
    keys = ", ".join(f"<code>{escape(key)}</code>" for key in sorted(api_keys))
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>shop mock server</title></head>
<body>
<h1>shop mock server</h1>
<ul>
{items}
</ul>
<h2>Credentials</h2>
<p>As in the documentation's <em>Credentials</em> section (docs/frontend.md):</p>
<ul>
<li>API key header <code>X-API-Key</code>: {keys}</li>
<li>dev client (client_credentials): <code>{DEV_CLIENT_ID}</code> / <code>{DEV_CLIENT_SECRET}</code></li>
<li>dev user (password grant): <code>{DEV_USERNAME}</code> / <code>{DEV_PASSWORD}</code></li>
<li>token endpoint: <code>POST {REALM_PATH}/protocol/openid-connect/token</code></li>
</ul>
</body></html>
"""


class Landing:
    def __init__(self, backend: str, gateway: str, api_keys: Iterable[str]) -> None:
        self.html = page(backend, gateway, api_keys)

    def routes(self) -> list[tuple[str, str, Endpoint]]:
        return [("GET", "/", self.index)]

    async def index(self, request: Request) -> Response:
        return HTMLResponse(self.html)
