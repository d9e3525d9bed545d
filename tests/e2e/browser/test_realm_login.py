"""Proof in a real browser: oidc-client-ts (from the npm registry) in a page of another origin, in
headless Chromium, logs in through the realm's login page, calls the catalog and the gateway with
its token, refreshes it and logs out.

Needs Debian's `chromium`, `npm` and the `playwright` package (which drives the system Chromium: no
`playwright install`). Without them the test skips and says why; in `tox -e browser`, which sets
SHOP_BROWSER_TESTS=required, a missing prerequisite fails instead.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse
from starlette.routing import Route

from mock_server.app import create_app
from mock_server.settings import Settings
from tests.conftest import TOKEN_PATH
from tests.support.browser import unavailable
from tests.support.live import running
from tests.support.ports import free_port

pytestmark = pytest.mark.browser

OIDC_CLIENT_TS = "oidc-client-ts@3"
BUNDLE = Path("node_modules/oidc-client-ts/dist/browser/oidc-client-ts.min.js")


def npm_prefix() -> Path:
    """Where oidc-client-ts is installed: SHOP_NPM_PREFIX (tox), else the user's cache directory."""
    cache = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(os.environ.get("SHOP_NPM_PREFIX") or Path(cache) / "shop-mock" / "npm")


@pytest.fixture(scope="module")
def oidc_bundle() -> Path:
    """oidc-client-ts' browser bundle, installed from the npm registry on first use (never a CDN)."""
    prefix = npm_prefix()
    if not (prefix / BUNDLE).exists():
        npm = shutil.which("npm")
        if npm is None:
            unavailable("npm is not installed (needed to install oidc-client-ts)")
        command = [npm, "install", "--no-audit", "--no-fund", "--prefix", str(prefix), OIDC_CLIENT_TS]
        result = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
        if result.returncode != 0 or not (prefix / BUNDLE).exists():
            unavailable(f"npm install {OIDC_CLIENT_TS} failed: {result.stderr.strip()[-300:]}")
    return prefix / BUNDLE


def front_end(bundle: Path, authority: str) -> Starlette:
    """A front end's pages: oidc-client-ts configured for the mock's realm and the public client."""
    setup = f"""<!DOCTYPE html><meta charset="utf-8"><script src="/oidc-client-ts.js"></script><script>
    window.mgr = new oidc.UserManager({{
      authority: "{authority}", client_id: "shop-web", response_type: "code", scope: "openid profile email",
      redirect_uri: location.origin + "/callback.html",
      post_logout_redirect_uri: location.origin + "/logged-out.html",
    }});
    </script>"""
    callback = """<script>
    mgr.signinRedirectCallback().then(user => { window.user = user; }, error => { window.failure = String(error); });
    </script>"""

    async def index(request: Request) -> HTMLResponse:
        return HTMLResponse(setup)

    async def signed_in(request: Request) -> HTMLResponse:
        return HTMLResponse(setup + callback)

    async def logged_out(request: Request) -> HTMLResponse:
        return HTMLResponse(setup + "<p id='bye'>logged out</p>")

    async def library(request: Request) -> FileResponse:
        return FileResponse(bundle, media_type="text/javascript")

    return Starlette(
        routes=[
            Route("/", index),
            Route("/callback.html", signed_in),
            Route("/logged-out.html", logged_out),
            Route("/oidc-client-ts.js", library),
        ]
    )


REFRESH = "async () => { const user = await mgr.signinSilent(); return [user.access_token, user.refresh_token]; }"
CALL_API = """async ([origin, token]) => {
  const statuses = [];
  for (const path of ["/shop/api/v1/productlines/", "/customers/v1/customers/"]) {
    const response = await fetch(origin + path, { headers: { Authorization: "Bearer " + token } });
    statuses.push(response.status);
  }
  return statuses;
}"""


def test_a_front_end_logs_in_calls_the_api_refreshes_and_logs_out(oidc_bundle: Path, chromium: Any) -> None:
    port = free_port()
    app = create_app(Settings(port=port))  # the issuer is the address the browser uses
    with running(app, port=port) as mock, running(front_end(oidc_bundle, f"{mock}/realms/shop")) as site:
        assert mock != site  # another origin: every call to the mock is cross-origin (CORS)
        page = chromium.new_page()
        page.goto(f"{site}/")
        page.evaluate("() => { mgr.signinRedirect(); }")
        page.wait_for_selector("#kc-form-login")
        assert page.url.startswith(f"{mock}/realms/shop/protocol/openid-connect/auth?")
        page.fill("#username", "shop-user")
        page.fill("#password", "shop-password")
        page.click("#kc-login")
        page.wait_for_url(f"{site}/callback.html*")
        page.wait_for_function("window.user || window.failure")
        assert page.evaluate("window.failure || null") is None
        user = page.evaluate("({token: user.access_token, refresh: user.refresh_token, name: user.profile.name})")
        assert user["name"] == "Shop User"
        cookies = {cookie["name"]: cookie for cookie in page.context.cookies(f"{mock}/realms/shop/")}
        for name in ("AUTH_SESSION_ID", "KEYCLOAK_IDENTITY"):  # the login's binding and the SSO secret
            assert (cookies[name]["httpOnly"], cookies[name]["sameSite"], cookies[name]["path"]) == (
                True,
                "Lax",
                "/realms/shop",
            )
        assert page.evaluate("user.session_state") not in cookies["KEYCLOAK_IDENTITY"]["value"]
        assert page.evaluate(CALL_API, [mock, user["token"]]) == [200, 200]

        renewed = page.evaluate(REFRESH)
        assert renewed[0] != user["token"] and renewed[1] != user["refresh"]
        assert page.evaluate(CALL_API, [mock, renewed[0]]) == [200, 200]

        page.evaluate("() => { mgr.signoutRedirect(); }")
        page.wait_for_selector("#bye")
        assert page.url.split("?")[0] == f"{site}/logged-out.html"
        refresh = {"grant_type": "refresh_token", "client_id": "shop-web", "refresh_token": renewed[1]}
        after = httpx.post(f"{mock}{TOKEN_PATH}", data=refresh)
        assert (after.status_code, after.json()["error_description"]) == (400, "Session not active")
        page.close()
