"""The realm file holds users, clients, redirect URIs and roles. It is the subset of Keycloak's
realm-export JSON (RealmRepresentation) that the dev realm needs, so a team can load its real export.
These fields are read:

- The realm's `realm`, `accessTokenLifespan`, `ssoSessionIdleTimeout`, `ssoSessionMaxLifespan`,
  `revokeRefreshToken`, `roles.realm` (with composites) and `defaultRole`.
- Each user's `id`, `username`, `enabled`, `email`, `emailVerified`, `firstName`, `lastName`,
  `realmRoles`, `serviceAccountClientId` and password `credentials`. A password is a plain `value`,
  or Keycloak's pbkdf2 hashes as exported.
- Each client's `clientId`, `enabled`, `publicClient`, `secret`, `redirectUris`, `webOrigins`,
  `standardFlowEnabled`, `directAccessGrantsEnabled` and `serviceAccountsEnabled`.
- Each client's attributes `pkce.code.challenge.method` and `post.logout.redirect.uris`.

Anything else is ignored.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from shop_contract.files import read_at_most

PBKDF2 = {"pbkdf2": "sha1", "pbkdf2-sha256": "sha256", "pbkdf2-sha512": "sha512"}
MAX_REALM_FILE_BYTES = 16 * 1024 * 1024  # The dev realm's export takes 2.5 KB.


class RealmFileError(Exception):
    """The realm file cannot be read or says something the dev realm cannot honour."""


@dataclass(frozen=True)
class Password:
    """A user's password as the file gives it, in clear or as a Keycloak pbkdf2 hash."""

    value: bytes = b""
    salt: bytes = b""
    digest: str = ""  # It is "" for a clear value.
    iterations: int = 0

    def matches(self, given: str) -> bool:
        if not self.value:
            return False
        candidate = given.encode()
        if self.digest:
            candidate = hashlib.pbkdf2_hmac(self.digest, candidate, self.salt, self.iterations, len(self.value))
        return secrets.compare_digest(self.value, candidate)


@dataclass(frozen=True)
class User:
    id: str
    username: str
    enabled: bool = True
    password: Password = field(default_factory=Password)
    email: str | None = None
    email_verified: bool = False
    first_name: str | None = None
    last_name: str | None = None
    roles: frozenset[str] = frozenset()
    service_account_of: str | None = None

    def profile(self) -> dict[str, Any]:
        """The claims of the `profile` and `email` scopes, as Keycloak puts them in tokens."""
        claims: dict[str, Any] = {"email_verified": self.email_verified, "preferred_username": self.username}
        name = " ".join(part for part in (self.first_name, self.last_name) if part)
        for claim, value in (("name", name), ("given_name", self.first_name), ("family_name", self.last_name)):
            if value:
                claims[claim] = value
        if self.email:
            claims["email"] = self.email
        return claims


@dataclass(frozen=True)
class Client:
    client_id: str
    secret: str | None = None  # None is a public client, such as a browser app, with no secret to prove.
    enabled: bool = True
    redirect_uris: tuple[str, ...] = ()
    post_logout_redirect_uris: tuple[str, ...] = ()
    web_origins: tuple[str, ...] = ()
    standard_flow: bool = True
    direct_access_grants: bool = False
    service_accounts: bool = False
    pkce_method: str | None = None  # A method the client must use, as Keycloak's client attribute says.

    @property
    def public(self) -> bool:
        return self.secret is None

    def accepts_redirect(self, uri: str) -> bool:
        return matches_registered(uri, self.redirect_uris)

    def accepts_post_logout_redirect(self, uri: str) -> bool:
        return matches_registered(uri, self.post_logout_redirect_uris)


@dataclass(frozen=True)
class RealmConfig:
    name: str = "shop"
    access_token_lifespan: int = 300
    sso_session_idle: int = 1800
    sso_session_max: int = 36000
    revoke_refresh_token: bool = True
    users: dict[str, User] = field(default_factory=dict)
    clients: dict[str, Client] = field(default_factory=dict)
    default_roles: frozenset[str] = frozenset()

    def service_account(self, client_id: str) -> User:
        """The user a client acts as in the client_credentials grant."""
        for user in self.users.values():
            if user.service_account_of == client_id:
                return user
        return User(
            id=f"service-account-{client_id}", username=f"service-account-{client_id}", roles=self.default_roles
        )


def is_acceptable_uri(uri: str) -> bool:
    """A redirect target the realm may send a browser to. It is absolute, with no user info and no fragment."""
    if not uri or any(ord(char) < 0x21 or char in '\\<>"' for char in uri):
        return False
    try:
        parts = urlsplit(uri)
        _ = parts.port  # A port that is not a number is a trick, not a URL.
    except ValueError:
        return False
    return bool(parts.scheme and parts.netloc) and "@" not in parts.netloc and not parts.fragment


def matches_registered(uri: str, registered: tuple[str, ...]) -> bool:
    """Keycloak's rule. A URI matches if it equals a registered URI, or starts with one that ends in `*`."""
    if not is_acceptable_uri(uri):
        return False
    return any(uri == pattern or (pattern.endswith("*") and uri.startswith(pattern[:-1])) for pattern in registered)


def read_realm_file(path: Path) -> RealmConfig:
    try:
        document = json.loads(read_at_most(path, MAX_REALM_FILE_BYTES).decode("utf-8"))
    except OSError as error:
        raise RealmFileError(f"realm file {path}: {error.strerror or error}") from error
    except ValueError as error:
        raise RealmFileError(f"realm file {path}: not valid JSON ({error})") from error
    try:
        return realm_config(document)
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise RealmFileError(f"realm file {path}: {error}") from error


def realm_config(document: dict[str, Any]) -> RealmConfig:
    """A RealmRepresentation, the subset the module docstring lists, as the dev realm's config."""
    if not isinstance(document, dict) or not isinstance(document.get("realm"), str):
        raise ValueError("not a Keycloak realm export: no `realm` name")
    composites = {
        role["name"]: tuple((role.get("composites") or {}).get("realm", ()))
        for role in (document.get("roles") or {}).get("realm", ())
    }
    default_role = (document.get("defaultRole") or {}).get("name")
    default_roles = expand({default_role} if default_role else set(), composites)
    users = [user_of(entry, composites) for entry in document.get("users", ())]
    clients = [client_of(entry) for entry in document.get("clients", ())]
    return RealmConfig(
        name=document["realm"],
        access_token_lifespan=positive(document, "accessTokenLifespan", 300),
        sso_session_idle=positive(document, "ssoSessionIdleTimeout", 1800),
        sso_session_max=positive(document, "ssoSessionMaxLifespan", 36000),
        revoke_refresh_token=bool(document.get("revokeRefreshToken", False)),
        users={user.username: user for user in users},
        clients={client.client_id: client for client in clients},
        default_roles=default_roles,
    )


MAX_LIFESPAN_S = 2**31 - 1
"""The longest lifespan Keycloak's realm format holds (a Java int of seconds). A token's `exp` past it
was a number no JavaScript login library reads right (a `--token-ttl` of 10**20 was accepted)."""


def positive(document: dict[str, Any], name: str, default: int) -> int:
    value = document.get(name, default)
    if not isinstance(value, int) or isinstance(value, bool) or not 0 < value <= MAX_LIFESPAN_S:
        raise ValueError(f"`{name}` must be 1 to {MAX_LIFESPAN_S} seconds, not {value!r}")
    return value


def expand(roles: set[str], composites: dict[str, tuple[str, ...]]) -> frozenset[str]:
    """The roles with every composite role's members, transitively."""
    seen: set[str] = set()
    pending = list(roles)
    while pending:
        role = pending.pop()
        if role not in seen:
            seen.add(role)
            pending.extend(composites.get(role, ()))
    return frozenset(seen)


def user_of(entry: dict[str, Any], composites: dict[str, tuple[str, ...]]) -> User:
    username = entry["username"]
    if not isinstance(username, str):
        raise ValueError(f"a user's `username` must be a string, not {username!r}")
    return User(
        id=str(entry.get("id") or username),
        username=username,
        enabled=bool(entry.get("enabled", True)),
        password=password_of(username, entry.get("credentials") or ()),
        email=entry.get("email"),
        email_verified=bool(entry.get("emailVerified", False)),
        first_name=entry.get("firstName"),
        last_name=entry.get("lastName"),
        roles=expand(set(entry.get("realmRoles") or ()), composites),
        service_account_of=entry.get("serviceAccountClientId"),
    )


def password_of(username: str, credentials: Any) -> Password:
    """The user's password credential. A user without one, such as a service account, cannot log in."""
    for credential in credentials:
        if credential.get("type") != "password":
            continue
        if "value" in credential:
            return Password(value=str(credential["value"]).encode())
        secret_data = json.loads(credential["secretData"])
        credential_data = json.loads(credential["credentialData"])
        algorithm = credential_data.get("algorithm", "")
        if algorithm not in PBKDF2:
            raise ValueError(
                f"user {username!r}: password hash {algorithm!r} is not supported (pbkdf2 only); "
                'give the user a clear credential {"type": "password", "value": "..."}'
            )
        try:
            value, salt = base64.b64decode(secret_data["value"]), base64.b64decode(secret_data["salt"])
        except binascii.Error as error:
            raise ValueError(f"user {username!r}: the password hash is not base64") from error
        return Password(value, salt, PBKDF2[algorithm], int(credential_data["hashIterations"]))
    return Password()


def client_of(entry: dict[str, Any]) -> Client:
    attributes = entry.get("attributes") or {}
    redirect_uris = tuple(entry.get("redirectUris") or ())
    post_logout = tuple(uri for uri in str(attributes.get("post.logout.redirect.uris") or "").split("##") if uri)
    if "+" in post_logout:  # In Keycloak, "+" stands for the valid redirect URIs.
        post_logout = tuple(uri for uri in post_logout if uri != "+") + redirect_uris
    public = bool(entry.get("publicClient", False))
    secret = entry.get("secret")
    if not public and not isinstance(secret, str):
        raise ValueError(f"client {entry['clientId']!r} is confidential but has no `secret`")
    return Client(
        client_id=entry["clientId"],
        secret=None if public else secret,
        enabled=bool(entry.get("enabled", True)),
        redirect_uris=redirect_uris,
        post_logout_redirect_uris=post_logout,
        web_origins=tuple(entry.get("webOrigins") or ()),
        standard_flow=bool(entry.get("standardFlowEnabled", True)),
        direct_access_grants=bool(entry.get("directAccessGrantsEnabled", False)),
        service_accounts=bool(entry.get("serviceAccountsEnabled", False)),
        pkce_method=attributes.get("pkce.code.challenge.method") or None,
    )
