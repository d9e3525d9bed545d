"""HTTP endpoints of the dev identity realm, at Keycloak's paths under /realms/NAME.

Only the HTTP side lives here: forms, cookies, redirects and pages. The flows are
`mock_server.realm.flows`. Every answer is a Keycloak-shaped error or page, never a 5xx. Forms are
read strictly, as UTF-8 with each field once, and anything unreadable is `invalid_request`.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl, unquote

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from mock_server.http.masking import mask_access_log
from mock_server.ops.instruments import LOGINS, TOKEN_ERRORS
from mock_server.realm.flows import LoginFailed, LogoutConfirmation, OAuthError, PageError, Realm, RedirectedError
from mock_server.realm.login_page import error_page, logged_out_page, login_page, logout_confirm_page
from mock_server.realm.logins import RealmUnavailable

Endpoint = Callable[[Request], Any]
SESSION_COOKIE = "KEYCLOAK_IDENTITY"  # The single-sign-on cookie. It is a secret of its own, never the `sid`.
LOGIN_COOKIE = "AUTH_SESSION_ID"  # It binds a login form to the browser it was served to.
NO_STORE = {"cache-control": "no-store", "pragma": "no-cache"}
PAGE = {  # Keycloak's default browser security headers, so that no other site may frame the login form.
    **NO_STORE,
    "x-frame-options": "SAMEORIGIN",
    "content-security-policy": "frame-src 'self'; frame-ancestors 'self'; object-src 'none';",
    "x-content-type-options": "nosniff",
    "x-robots-tag": "none",
    "referrer-policy": "no-referrer",
}


class FormError(Exception):
    """A form, query or Basic credentials that cannot be read."""


def form_fields(body: bytes) -> dict[str, str]:
    """An urlencoded form or query, read strictly as Keycloak insists, in UTF-8 only and each field once."""
    try:
        pairs = parse_qsl(body.decode("utf-8"), keep_blank_values=True, errors="strict")
    except (UnicodeDecodeError, ValueError) as error:  # The percent-escapes raise UnicodeDecodeError too.
        raise FormError("The form is not valid UTF-8 URL-encoded text.") from error
    fields = dict(pairs)
    if len(fields) != len(pairs):
        raise FormError("duplicated parameter")
    return fields


def basic_credentials(request: Request) -> tuple[str, str] | None:
    """Client credentials sent as HTTP Basic, if any. They are client_secret_basic, URL-encoded UTF-8."""
    scheme, _, value = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        client_id, colon, secret = base64.b64decode(value.strip(), validate=True).decode("utf-8").partition(":")
        if not colon:
            raise ValueError("no colon")
        return unquote(client_id, errors="strict"), unquote(secret, errors="strict")
    except (binascii.Error, ValueError) as error:  # UnicodeDecodeError is a ValueError.
        raise FormError("Invalid Basic credentials.") from error


def bearer_token(request: Request) -> str | None:
    scheme, _, value = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer":
        return None
    return value.strip() or None


def oauth_error(error: OAuthError, headers: dict[str, str] | None = None) -> JSONResponse:
    body = {"error": error.error, "error_description": str(error)}
    return JSONResponse(body, status_code=error.status, headers={**NO_STORE, **(headers or {})})


def page_error(error: PageError | FormError) -> HTMLResponse:
    return HTMLResponse(error_page(str(error)), status_code=400, headers=PAGE)


def answering(endpoint: Endpoint) -> Endpoint:
    """`endpoint`, with the realm's shared memory not answering as a 503.

    Where a client reads JSON, the 503 is a JSON OAuth error, `temporarily_unavailable`. Where a
    browser reads, it is a page.
    """

    async def call(request: Request) -> Response:
        try:
            response: Response = await endpoint(request)
        except RealmUnavailable as error:
            headers = {**NO_STORE, "retry-after": "1"}
            if request.url.path.endswith(("/token", "/userinfo", "/certs", "/openid-configuration")):
                body = {"error": "temporarily_unavailable", "error_description": str(error)}
                return JSONResponse(body, status_code=503, headers=headers)
            return HTMLResponse(error_page(str(error)), status_code=503, headers={**PAGE, **headers})
        return response

    call.__name__ = endpoint.__name__
    return call


class Identity:
    """The realm's endpoints, as (method, path, endpoint) routes for the app to mount."""

    def __init__(self, realm: Realm) -> None:
        self.realm = realm
        mask_access_log()  # The realm puts credentials in URLs, codes in redirects and ID tokens in logouts.

    def routes(self) -> list[tuple[str, str, Endpoint]]:
        """The (method, path, endpoint) routes.

        An endpoint whose shared memory does not answer is a 503, by `answering`.
        """
        return [(method, path, answering(endpoint)) for method, path, endpoint in self._routes()]

    def _routes(self) -> list[tuple[str, str, Endpoint]]:
        path = self.realm.path
        endpoints = f"{path}/protocol/openid-connect"
        return [
            ("GET", f"{path}/.well-known/openid-configuration", self.discovery),
            ("GET", f"{endpoints}/certs", self.certs),
            ("POST", f"{endpoints}/token", self.token),
            ("GET", f"{endpoints}/auth", self.authorize),
            ("POST", f"{path}/login-actions/authenticate", self.authenticate),
            ("GET", f"{endpoints}/userinfo", self.userinfo),
            ("POST", f"{endpoints}/userinfo", self.userinfo),
            ("GET", f"{endpoints}/logout", self.logout),
            ("POST", f"{endpoints}/logout", self.logout),
            ("POST", f"{endpoints}/logout/logout-confirm", self.confirm_logout),
        ]

    def base(self, request: Request) -> str:
        """The realm's URL on the host the client called, for the endpoints discovery lists.

        The issuer itself is fixed, as `Realm.issuer`. Only where the endpoints are reached follows the
        request. So a browser that reaches the mock by another name reaches them too.
        """
        return f"{str(request.base_url).rstrip('/')}{self.realm.path}"

    async def discovery(self, request: Request) -> Response:
        return JSONResponse(self.realm.discovery(self.base(request)))

    async def certs(self, request: Request) -> Response:
        return JSONResponse(self.realm.tokens.keys.jwks())

    async def token(self, request: Request) -> Response:
        try:
            fields = form_fields(await request.body())
            basic = basic_credentials(request)
        except FormError as error:
            return oauth_error(OAuthError("invalid_request", str(error)))
        try:
            grant = self.realm.token_request(fields, basic)
        except OAuthError as error:
            TOKEN_ERRORS.labels(error.error).inc()
            return oauth_error(error)
        LOGINS.labels(fields["grant_type"]).inc()  # A grant succeeded, so its type is one of the four.
        return JSONResponse(grant, headers=NO_STORE)

    async def authorize(self, request: Request) -> Response:
        try:
            params = form_fields(request.scope["query_string"])
            checked = self.realm.authorization_request(params)
        except (FormError, PageError) as error:
            return page_error(error)
        except RedirectedError as error:
            return RedirectResponse(error.location, status_code=302)
        session = self.realm.browser_session(request.cookies.get(SESSION_COOKIE))
        prompt = params.get("prompt", "").split()
        if session is not None and "login" not in prompt:
            return RedirectResponse(self.realm.code_redirect(checked, session), status_code=302)
        if "none" in prompt:
            location = self.realm.error_redirect(checked, "login_required", "Login required")
            return RedirectResponse(location, status_code=302)
        tab_id, binding = self.realm.begin_login(checked, request.cookies.get(LOGIN_COOKIE))
        response = self._login_form(checked.client.client_id, tab_id)
        self._set_cookie(response, LOGIN_COOKIE, binding)
        return response

    def _set_cookie(self, response: Response, name: str, value: str) -> None:
        """One of the realm's browser cookies, HttpOnly and SameSite=Lax on the realm's path.

        It lasts as long as the browser's session.
        """
        response.set_cookie(name, value, path=self.realm.path, httponly=True, samesite="lax")

    def _login_form(self, client_id: str, tab_id: str, error: str | None = None, username: str = "") -> Response:
        action = f"{self.realm.path}/login-actions/authenticate?tab_id={tab_id}"
        users = sorted(name for name, user in self.realm.config.users.items() if user.password.value)
        html = login_page(self.realm.config.name, client_id, action, users, error, username)
        return HTMLResponse(html, status_code=200 if error is None else 401, headers=PAGE)

    async def authenticate(self, request: Request) -> Response:
        try:
            tab_id = form_fields(request.scope["query_string"]).get("tab_id", "")
            fields = form_fields(await request.body())
            binding = request.cookies.get(LOGIN_COOKIE)
            location, cookie = self.realm.login(tab_id, binding, fields.get("username", ""), fields.get("password", ""))
        except (FormError, PageError) as error:
            return page_error(error)
        except LoginFailed as error:
            pending = self.realm.pending.get(tab_id)
            client_id = pending.request.client.client_id if pending else ""
            return self._login_form(client_id, tab_id, str(error), fields.get("username", ""))
        response = RedirectResponse(location, status_code=302)
        self._set_cookie(response, SESSION_COOKIE, cookie)
        return response

    async def userinfo(self, request: Request) -> Response:
        try:
            return JSONResponse(self.realm.userinfo(bearer_token(request)), headers=NO_STORE)
        except OAuthError as error:
            challenge = f'Bearer realm="{self.realm.config.name}", error="{error.error}", error_description="{error}"'
            return oauth_error(error, {"WWW-Authenticate": challenge})

    async def logout(self, request: Request) -> Response:
        try:
            params = form_fields(request.scope["query_string"])
            if request.method == "POST":
                params |= form_fields(await request.body())
            if "refresh_token" in params:  # A client logs itself out with its refresh token.
                client = self.realm.authenticate_client(params, basic_credentials(request))
                self.realm.backchannel_logout(client, params["refresh_token"])
                return Response(status_code=204, headers=NO_STORE)
            cookies = request.cookies
            target = self.realm.logout(params, cookies.get(SESSION_COOKIE), cookies.get(LOGIN_COOKIE))
        except (FormError, PageError) as error:
            return page_error(error)
        except OAuthError as error:
            return oauth_error(error)
        if isinstance(target, LogoutConfirmation):
            action = f"{self.realm.path}/protocol/openid-connect/logout/logout-confirm"
            response = HTMLResponse(logout_confirm_page(action, target.code), headers=PAGE)
            self._set_cookie(response, LOGIN_COOKIE, target.binding)
            return response
        return self._logged_out(target)

    async def confirm_logout(self, request: Request) -> Response:
        try:
            code = form_fields(await request.body()).get("session_code", "")
            target = self.realm.confirm_logout(code, request.cookies.get(LOGIN_COOKIE))
        except (FormError, PageError) as error:
            return page_error(error)
        return self._logged_out(target)

    def _logged_out(self, target: str | None) -> Response:
        """Back to the client's URI, or the logged-out page. The SSO cookie is removed either way."""
        response: Response = (
            RedirectResponse(target, status_code=302) if target else HTMLResponse(logged_out_page(), headers=PAGE)
        )
        response.delete_cookie(SESSION_COOKIE, path=self.realm.path)
        return response
