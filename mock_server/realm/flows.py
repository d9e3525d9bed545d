"""The realm's OpenID Connect flows, as Keycloak runs them and names their errors.

The flows are these:

- the authorization code with PKCE, through the login page;
- the refresh, with rotation;
- the password and client_credentials grants;
- userinfo and end-session.

This module is pure Python. The HTTP layer is `mock_server.realm.identity`. Authlib's authorization
server was the first choice. But it has no Starlette server integration, nor any async one. Its error
names also differ from Keycloak's where front ends and tests look. A wrong client secret is
`invalid_client` there and `unauthorized_client` here. The flows are small, so they are written out
here and tested over HTTP error by error.

Long because the flows are one object, `Realm`. Every grant and every browser step reads and
changes the same remembered maps: codes, login sessions, pending logins and logouts. Each signs with
the same keys and answers with Keycloak's error names. Split by flow, each module would reach into
the state of the others.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import re
import secrets
import time
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlencode

from mock_server.realm import codecs
from mock_server.realm.keys import KeyRing
from mock_server.realm.logins import (
    AuthorizationCode,
    AuthorizationRequest,
    InProcess,
    Memory,
    PendingLogin,
    PendingLogout,
    Session,
)
from mock_server.realm.realm_file import Client, RealmConfig, User
from mock_server.realm.tokens import ACCESS, ID, REFRESH, Tokens, half_hash

CODE_TTL = 60  # Keycloak's accessCodeLifespan.
LOGIN_TTL = 1800  # Keycloak's accessCodeLifespanLogin.
CAPACITY = 4096  # The bound of each map: sessions, codes, pending logins, SSO cookies and pending logouts.
VERIFIER = re.compile(r"[A-Za-z0-9\-._~]{43,128}")  # The code_verifier of RFC 7636.
CHALLENGE = re.compile(r"[A-Za-z0-9\-._~]{43,128}")
BROWSER_SECRET = re.compile(r"[A-Za-z0-9_-]{43}")  # The shape of secrets.token_urlsafe(32), as the realm's cookies are.
COOKIE_NOT_FOUND = "Cookie not found. Please make sure cookies are enabled in your browser."
TIMED_OUT = "Your login attempt timed out. Login will start from the beginning."
LOGOUT_FAILED = "Logout failed"
REUSED = "Maximum allowed refresh token reuse exceeded"
BAD_CLIENT = "Invalid client or Invalid client credentials"
NOT_ALLOWED = "Client is not allowed to initiate browser login with given response_type"
NO_CLIENT_FOR_LOGOUT = (
    "Either the parameter client_id or the parameter id_token_hint is required when post_logout_redirect_uri is used."
)


class OAuthError(Exception):
    """An OAuth 2 error response. `error` is the code Keycloak sends, and the message is its description."""

    def __init__(self, error: str, description: str, status: int = 400) -> None:
        super().__init__(description)
        self.error = error
        self.status = status


class PageError(Exception):
    """An error shown to the user on a page, never sent to a redirect URI that is not trusted."""


class LoginFailed(Exception):
    """A wrong user name or password. The login page is shown again with the message."""


class RedirectedError(Exception):
    """An authorization error reported to the client's redirect URI, once that URI is checked."""

    def __init__(self, location: str) -> None:
        super().__init__(location)
        self.location = location


@dataclasses.dataclass(frozen=True)
class LogoutConfirmation:
    """A logout the user must confirm. `code` goes in the confirmation form, and `binding` in the cookie."""

    code: str
    binding: str


class Realm:
    """One realm, with its config from the realm file, its keys, fixed issuer, sessions and codes."""

    def __init__(
        self,
        config: RealmConfig | None = None,
        keys: KeyRing | Callable[[], KeyRing] | None = None,
        issuer: str | None = None,
        memory: Memory | None = None,
    ) -> None:
        self.config = config or RealmConfig()
        self.path = f"/realms/{self.config.name}"
        self.issuer = issuer or f"http://127.0.0.1:8000{self.path}"
        self.tokens = Tokens(keys or KeyRing.generated, self.issuer)
        self.verify = self.tokens.verify  # Bound once, because the hot path calls it directly.
        self.sign = self.tokens.sign
        memory = memory or InProcess()  # A given memory is shared by replicas, as in realm.shared.
        self.sessions = memory.map("sessions", codecs.Sessions(self.config), CAPACITY)
        self.codes = memory.map("codes", codecs.Codes(self.config), CAPACITY)
        self.pending = memory.map("pending", codecs.Logins(self.config), CAPACITY)
        # It maps the SSO cookie secret's digest, in hex, to a session id.
        self.browsers = memory.map("browsers", codecs.Text(), CAPACITY)
        self.logouts = memory.map("logouts", codecs.Logouts(), CAPACITY)

    def make_keys(self) -> None:
        """Make the signing keys now, if they are still to be made (realm/tokens.py). A server calls it
        before it accepts connections, so that its first login does not wait for an RSA key."""
        _ = self.tokens.keys

    def discovery(self, base: str) -> dict[str, Any]:
        """The OpenID Connect discovery document. Its endpoints are under `base`, the realm's URL as called."""
        endpoints = f"{base}/protocol/openid-connect"
        return {
            "issuer": self.issuer,
            "authorization_endpoint": f"{endpoints}/auth",
            "token_endpoint": f"{endpoints}/token",
            "userinfo_endpoint": f"{endpoints}/userinfo",
            "end_session_endpoint": f"{endpoints}/logout",
            "jwks_uri": f"{endpoints}/certs",
            "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials", "password"],
            "response_types_supported": ["code"],
            "response_modes_supported": ["query", "fragment"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["RS256"],
            "token_endpoint_auth_methods_supported": ["client_secret_post", "client_secret_basic"],
            "code_challenge_methods_supported": ["plain", "S256"],
            "scopes_supported": ["openid", "profile", "email"],
            "claims_supported": ["sub", "iss", "name", "given_name", "family_name", "preferred_username", "email"],
            "authorization_response_iss_parameter_supported": True,
        }

    # The token endpoint.

    def token_request(self, form: Mapping[str, str], basic: tuple[str, str] | None = None) -> dict[str, Any]:
        """The token endpoint. `form` is the decoded body, and `basic` the client's Basic credentials."""
        grant = form.get("grant_type")
        if not grant:
            raise OAuthError("invalid_request", "Missing form parameter: grant_type")
        handler = {
            "client_credentials": self._client_credentials,
            "password": self._password,
            "authorization_code": self._authorization_code,
            "refresh_token": self._refresh,
        }.get(grant)
        if handler is None:
            raise OAuthError("unsupported_grant_type", "Unsupported grant_type")
        return handler(self.authenticate_client(form, basic), form)

    def authenticate_client(self, form: Mapping[str, str], basic: tuple[str, str] | None) -> Client:
        client_id, secret = basic if basic else (form.get("client_id", ""), form.get("client_secret"))
        if not client_id:
            raise OAuthError("invalid_client", "Missing parameter: client_id", status=401)
        client = self.config.clients.get(client_id)
        if client is None or not client.enabled:
            raise OAuthError("invalid_client", BAD_CLIENT, status=401)
        if client.secret is not None:
            if secret is None:
                raise OAuthError("unauthorized_client", "Client secret not provided in request", status=401)
            if not secrets.compare_digest(client.secret.encode(), secret.encode()):
                raise OAuthError("unauthorized_client", BAD_CLIENT, status=401)
        return client

    def _client_credentials(self, client: Client, form: Mapping[str, str]) -> dict[str, Any]:
        if client.public:
            raise OAuthError("unauthorized_client", "Public client not allowed to retrieve service account")
        if not client.service_accounts:
            raise OAuthError("unauthorized_client", "Client not enabled to retrieve service account")
        user = self.config.service_account(client.client_id)
        return self._grant(client, user, form.get("scope", ""), session=None)

    def _password(self, client: Client, form: Mapping[str, str]) -> dict[str, Any]:
        if not client.direct_access_grants:
            raise OAuthError("unauthorized_client", "Client not allowed for direct access grants")
        user = self.check_user(form.get("username", ""), form.get("password", ""))
        if user is None:
            raise OAuthError("invalid_grant", "Invalid user credentials", status=401)
        return self._grant(client, user, form.get("scope", ""), session=self.start_session(user))

    def _authorization_code(self, client: Client, form: Mapping[str, str]) -> dict[str, Any]:
        if not client.standard_flow:
            raise OAuthError("unauthorized_client", "Client not allowed to exchange code")
        text = form.get("code")
        if not text:
            raise OAuthError("invalid_request", "Missing parameter: code")
        code = self.codes.pop(text)  # A code is used once, whatever happens next.
        if code is None:
            raise OAuthError("invalid_grant", "Code not valid")
        request = code.request
        if request.client.client_id != client.client_id:
            raise OAuthError("invalid_grant", "Auth error")
        if form.get("redirect_uri") != request.redirect_uri:
            raise OAuthError("invalid_grant", "Incorrect redirect_uri")
        if request.code_challenge is not None:
            check_verifier(form.get("code_verifier"), request.code_challenge, request.code_challenge_method)
        session = self.sessions.get(code.session_id)
        if session is None:
            raise OAuthError("invalid_grant", "Session not active")
        return self._grant(client, session.user, request.scope, session, nonce=request.nonce, auth_time=code.auth_time)

    def _refresh(self, client: Client, form: Mapping[str, str]) -> dict[str, Any]:
        text = form.get("refresh_token")
        if not text:
            raise OAuthError("invalid_request", "Missing parameter: refresh_token")
        claims = self.tokens.decode(text, REFRESH, verify_exp=False)
        if claims is None:
            raise OAuthError("invalid_grant", "Invalid refresh token")
        if claims["exp"] <= time.time():
            raise OAuthError("invalid_grant", "Token is not active")
        if claims.get("azp") != client.client_id:
            raise OAuthError("invalid_grant", "Invalid refresh token. Token client and authorized client don't match")
        session = self.sessions.get(str(claims.get("sid")))
        if session is None:
            raise OAuthError("invalid_grant", "Session not active")
        if self.config.revoke_refresh_token and session.refresh_ids.get(client.client_id) != claims.get("jti"):
            raise OAuthError("invalid_grant", REUSED)
        return self._grant(client, session.user, str(claims.get("scope", "")), session, auth_time=session.started)

    def _grant(
        self,
        client: Client,
        user: User,
        scope: str,
        session: Session | None,
        nonce: str | None = None,
        auth_time: int | None = None,
    ) -> dict[str, Any]:
        """The token response Keycloak sends. It holds an access token, and with a session, refresh and ID tokens."""
        now = int(time.time())
        scope = " ".join(["openid"] * ("openid" in scope.split()) + ["profile", "email"])
        common = {"iat": now, "iss": self.issuer, "sub": user.id, "azp": client.client_id}
        if session is not None:
            common |= {"sid": session.id, "auth_time": auth_time or session.started}
        origins = sorted({origin for uri in client.redirect_uris if (origin := origin_of(uri))})
        access = self.sign(
            {
                **common,
                "exp": now + self.config.access_token_lifespan,
                "jti": secrets.token_hex(16),
                "aud": "account",
                "typ": ACCESS,
                "acr": "1",
                "allowed-origins": origins,
                "realm_access": {"roles": sorted(user.roles | self.config.default_roles)},
                "scope": scope,
                **user.profile(),
            }
        )
        response: dict[str, Any] = {
            "access_token": access,
            "expires_in": self.config.access_token_lifespan,
            "refresh_expires_in": 0,
            "token_type": "Bearer",
        }
        if "openid" in scope.split():
            id_claims = {
                **common,
                "exp": now + self.config.access_token_lifespan,
                "jti": secrets.token_hex(16),
                "aud": client.client_id,
                "typ": ID,
                "at_hash": half_hash(access),
                "acr": "1",
                **user.profile(),
            }
            if nonce is not None:
                id_claims["nonce"] = nonce
            response["id_token"] = self.sign(id_claims)
        if session is not None:
            lifetime = self.refresh_lifetime(session, now)
            refresh_id = secrets.token_hex(16)
            renewed = dataclasses.replace(session, refresh_ids={**session.refresh_ids, client.client_id: refresh_id})
            # The lifetime is an idle timeout, so each use extends it. The swap starts only from the
            # session as read. So of two replicas turning one refresh token at once, one wins.
            if not self.sessions.swap(session.id, session, renewed, lifetime):
                gone = self.sessions.get(session.id) is None
                raise OAuthError("invalid_grant", "Session not active" if gone else REUSED)
            response["refresh_expires_in"] = lifetime
            response["refresh_token"] = self.sign(
                {**common, "exp": now + lifetime, "jti": refresh_id, "aud": self.issuer, "typ": REFRESH, "scope": scope}
            )
            response["session_state"] = session.id
        response["not-before-policy"] = 0
        response["scope"] = scope
        return response

    def refresh_lifetime(self, session: Session, now: int) -> int:
        return max(1, min(self.config.sso_session_idle, session.started + self.config.sso_session_max - now))

    # Users and sessions.

    def check_user(self, username: str, password: str) -> User | None:
        user = self.config.users.get(username)
        if user is None or not user.enabled or not user.password.matches(password):
            return None
        return user

    def start_session(self, user: User, browser: bytes | None = None) -> Session:
        session = Session(id=secrets.token_urlsafe(24), user=user, started=int(time.time()), browser=browser)
        self.sessions.put(session.id, session, self.config.sso_session_idle)
        return session

    def end_session(self, session_id: str | None) -> None:
        if session_id:
            self.sessions.pop(session_id)

    # The authorization endpoint and the login page.

    def authorization_request(self, params: Mapping[str, str]) -> AuthorizationRequest:
        """Check an authorization request.

        `PageError` means there is no trusted redirect URI to report to. `RedirectedError` is an error
        for the client, at its redirect URI.
        """
        client = self.config.clients.get(params.get("client_id", ""))
        if client is None:
            raise PageError("Client not found.")
        if not client.enabled:
            raise PageError("Client disabled.")
        redirect_uri = params.get("redirect_uri", "")
        if not client.accepts_redirect(redirect_uri):
            raise PageError("Invalid parameter: redirect_uri")
        response_mode = params.get("response_mode") or "query"
        if response_mode not in {"query", "fragment"}:
            response_mode = "query"
        request = AuthorizationRequest(
            client=client,
            redirect_uri=redirect_uri,
            scope=params.get("scope", "openid"),
            state=params.get("state"),
            nonce=params.get("nonce"),
            code_challenge=params.get("code_challenge"),
            code_challenge_method=params.get("code_challenge_method"),
            response_mode=response_mode,
        )

        def refuse(error: str, description: str) -> RedirectedError:
            return RedirectedError(self.error_redirect(request, error, description))

        response_type = params.get("response_type")
        if not response_type:
            raise refuse("invalid_request", "Missing parameter: response_type")
        if response_type != "code":
            raise refuse(
                "unsupported_response_type", "Client is not allowed to initiate browser login with given response_type."
            )
        if not client.standard_flow:
            raise refuse(
                "unauthorized_client",
                f"{NOT_ALLOWED}. Standard flow is disabled for the client.",
            )
        method, challenge = request.code_challenge_method, request.code_challenge
        if client.pkce_method and method is None:
            raise refuse("invalid_request", "Missing parameter: code_challenge_method")
        if client.pkce_method and method != client.pkce_method:
            raise refuse("invalid_request", "Invalid parameter: code challenge method is not configured one")
        if method is not None and method not in {"plain", "S256"}:
            raise refuse("invalid_request", "Invalid parameter: code_challenge_method")
        if (method is not None or client.pkce_method) and challenge is None:
            raise refuse("invalid_request", "Missing parameter: code_challenge")
        if challenge is not None and not CHALLENGE.fullmatch(challenge):
            raise refuse("invalid_request", "Invalid parameter: code_challenge")
        if challenge is not None and method is None:
            request = dataclasses.replace(request, code_challenge_method="plain")
        return request

    def begin_login(self, request: AuthorizationRequest, binding: str | None) -> tuple[str, str]:
        """Keep the checked request for the login form, bound to the browser it is served to.

        It returns the tab id, which goes in the form's action, and the binding. The binding is the
        browser's own if it has the shape the realm gives one, else a new one. It is Keycloak's
        AUTH_SESSION_ID cookie, one for all the browser's tabs. Only a post carrying that cookie may use
        the form, so a page of another site cannot post it (login CSRF). The cookie is SameSite=Lax, so
        it is never sent with a cross-site POST.
        """
        binding = browser_binding(binding)
        tab_id = secrets.token_urlsafe(24)
        self.pending.put(tab_id, PendingLogin(request, digest(binding)), LOGIN_TTL)
        return tab_id, binding

    def login(self, tab_id: str, binding: str | None, username: str, password: str) -> tuple[str, str]:
        """The login form's submission, from the browser it was served to.

        It returns the redirect with a code, and the new session's SSO cookie secret.
        """
        if not binding:
            raise PageError(COOKIE_NOT_FOUND)
        pending = self.pending.get(tab_id)
        if pending is None or not secrets.compare_digest(pending.binding, digest(binding)):
            raise PageError(TIMED_OUT)  # As in Keycloak, this browser's login has no such tab.
        user = self.check_user(username, password)
        if user is None:
            raise LoginFailed("Invalid username or password.")
        if self.pending.pop(tab_id) is None:  # Another replica took this form first.
            raise PageError(TIMED_OUT)
        cookie = secrets.token_urlsafe(32)
        session = self.start_session(user, digest(cookie))
        self.browsers.put(digest(cookie).hex(), session.id, self.config.sso_session_max)
        return self.code_redirect(pending.request, session), cookie

    def browser_session(self, cookie: str | None) -> Session | None:
        """The live session an SSO cookie's secret opens.

        It is found by the secret's digest, a look-up that tells nothing of the secret. It is then
        compared in constant time. A `sid` opens nothing.
        """
        if not cookie:
            return None
        presented = digest(cookie)
        session = self.sessions.get(self.browsers.get(presented.hex()) or "")
        if session is None or session.browser is None or not secrets.compare_digest(session.browser, presented):
            return None
        return session

    def code_redirect(self, request: AuthorizationRequest, session: Session) -> str:
        code = secrets.token_urlsafe(32)
        self.codes.put(code, AuthorizationCode(request, session.id, session.started), CODE_TTL)
        return self.redirect(request, {"code": code, "session_state": session.id})

    def error_redirect(self, request: AuthorizationRequest, error: str, description: str) -> str:
        return self.redirect(request, {"error": error, "error_description": description})

    def redirect(self, request: AuthorizationRequest, params: dict[str, str]) -> str:
        if request.state is not None:
            params = {**params, "state": request.state}
        encoded = urlencode({**params, "iss": self.issuer})
        if request.response_mode == "fragment":
            return f"{request.redirect_uri}#{encoded}"
        return f"{request.redirect_uri}{'&' if '?' in request.redirect_uri else '?'}{encoded}"

    # Userinfo and logout.

    def userinfo(self, token: str | None) -> dict[str, Any]:
        if not token:
            raise OAuthError("invalid_request", "Token not provided", status=401)
        claims = self.verify(token)
        if claims is None:
            raise OAuthError("invalid_token", "Token verification failed", status=401)
        if "sid" in claims and self.sessions.get(claims["sid"]) is None:
            raise OAuthError("invalid_token", "User session not found or doesn't have client attached on it", 401)
        keys = ("sub", "email_verified", "name", "preferred_username", "given_name", "family_name", "email")
        return {key: claims[key] for key in keys if key in claims}

    def logout(
        self, params: Mapping[str, str], cookie: str | None, binding: str | None
    ) -> str | LogoutConfirmation | None:
        """A browser's end-session request. It ends the session of its SSO cookie and of the `id_token_hint`.

        It returns the URI to go back to, if any. Without an ID token the user must confirm first, as in
        Keycloak, because a page of another site could send the browser here. It then returns the
        confirmation.
        """
        hint_text = params.get("id_token_hint")
        hint = self.tokens.decode(hint_text, ID, verify_exp=False) if hint_text else None
        if hint_text and hint is None:
            raise PageError("Invalid parameter: id_token_hint")
        client_id = params.get("client_id") or (str(hint["aud"]) if hint else None)
        if hint and client_id != hint["aud"]:
            raise PageError("Parameter client_id different than the client for which ID Token was issued")
        target = params.get("post_logout_redirect_uri")
        if target is not None:
            client = self.config.clients.get(client_id or "")
            if client is None:
                raise PageError(NO_CLIENT_FOR_LOGOUT)
            if not client.accepts_post_logout_redirect(target):
                raise PageError("Invalid redirect uri")
            if "state" in params:
                target = f"{target}{'&' if '?' in target else '?'}{urlencode({'state': params['state']})}"
        session = self.browser_session(cookie)
        if hint is None and session is not None:
            binding = browser_binding(binding)
            code = secrets.token_urlsafe(24)
            self.logouts.put(code, PendingLogout(session.id, target, digest(binding)), LOGIN_TTL)
            return LogoutConfirmation(code, binding)
        self.end_session(session.id if session else None)
        if hint:
            self.end_session(str(hint.get("sid", "")))
        return target

    def confirm_logout(self, code: str, binding: str | None) -> str | None:
        """The confirmation form's submission, from the browser it was served to. It ends the session.

        It returns the URI to go back to, if any.
        """
        if not binding:
            raise PageError(COOKIE_NOT_FOUND)
        pending = self.logouts.get(code)
        if pending is None or not secrets.compare_digest(pending.binding, digest(binding)):
            raise PageError(LOGOUT_FAILED)
        if self.logouts.pop(code) is None:
            raise PageError(LOGOUT_FAILED)
        self.end_session(pending.session_id)
        return pending.target

    def backchannel_logout(self, client: Client, refresh_token: str | None) -> None:
        """A confidential client's logout with its refresh token. It is Keycloak's POST to the logout URL."""
        claims = self.tokens.decode(refresh_token or "", REFRESH, verify_exp=False)
        if claims is None or claims.get("azp") != client.client_id:
            raise OAuthError("invalid_grant", "Invalid refresh token")
        self.end_session(str(claims.get("sid", "")))


def origin_of(uri: str) -> str | None:
    """The web origin of a redirect URI pattern, as Keycloak's `+` web origin derives it."""
    scheme, _, rest = uri.partition("://")
    host = rest.split("/", 1)[0].rstrip("*")
    if not scheme or not host or host.endswith(":"):
        return None
    return f"{scheme}://{host}"


def browser_binding(cookie: str | None) -> str:
    """The browser's binding cookie if it has the shape the realm gives one, else a new one."""
    return cookie if cookie is not None and BROWSER_SECRET.fullmatch(cookie) else secrets.token_urlsafe(32)


def digest(secret: str) -> bytes:
    """What the realm keeps of a browser's secret. It is its SHA-256, never the secret itself."""
    return hashlib.sha256(secret.encode()).digest()


def check_verifier(verifier: str | None, challenge: str, method: str | None) -> None:
    """The check of RFC 7636. The verifier must hash (S256) or equal (plain) the challenge the code was issued for."""
    if not verifier:
        raise OAuthError("invalid_grant", "PKCE code verifier not specified")
    if not VERIFIER.fullmatch(verifier):
        raise OAuthError("invalid_grant", "PKCE verification failed: Invalid code verifier")
    if method == "S256":
        digest = hashlib.sha256(verifier.encode("ascii")).digest()
        verifier = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
    if not secrets.compare_digest(verifier, challenge):
        raise OAuthError("invalid_grant", "PKCE verification failed: Code mismatch")
