"""How a mock server is configured: one frozen value, built from CLI flags or by tests."""

from __future__ import annotations

import ipaddress
import secrets
from dataclasses import dataclass, field
from pathlib import Path

from shop_contract.document import bundled_fixtures, installed_folder

DEFAULT_API_KEY = "dev-api-key"
MEMORY = "memory"  # The state in the process. Else the setting is the URL of the Redis database replicas share.
DEFAULT_FIXTURES = bundled_fixtures()
DEFAULT_REALM_FILE = installed_folder("mock_server") / "realm" / "shop-realm.json"


@dataclass(frozen=True)
class Settings:
    host: str = "127.0.0.1"
    port: int = 8000
    port_file: Path | None = None  # Written with the bound port once serving.
    spec: Path | None = None  # None is the bundled spec.
    fixtures: Path | None = DEFAULT_FIXTURES  # None starts empty.
    api_keys: frozenset[str] = field(default_factory=lambda: frozenset({DEFAULT_API_KEY}))
    cors_origins: tuple[str, ...] = ("*",)
    log_level: str = "info"
    access_log: bool = False  # One line per request, in uvicorn's access log.
    log_format: str = "text"  # Or "json", one JSON object a line, a request's included (mock_server.http.jsonlog).
    metrics: bool = True  # Requests counted and timed for /__mock__/metrics, by mock_server.control.observe.
    max_body_bytes: int = 1024 * 1024
    journal_size: int = 200
    token_ttl: int | None = None  # None is the realm file's accessTokenLifespan.
    issuer: str | None = None  # The realm's fixed `iss`. None is the URL the banner shows (issuer_for).
    realm_file: Path = DEFAULT_REALM_FILE  # Keycloak realm-export JSON, with users, clients and roles.
    realm_key: Path | None = None  # A PEM file of the realm's keys, kept across runs. None is a key in memory.
    rotate_realm_key: bool = False  # Put a new signing key first in `realm_key`.
    fast_path: bool = True  # Valid requests answered by mock_server.api.fastpath. Off only to compare with Connexion.
    admin: bool = True  # The admin API (/__mock__/), off with --no-admin.
    admin_token: str | None = None  # Required as `Authorization: Bearer` on /__mock__/ when set.
    allowed_hosts: tuple[str, ...] = ()  # Host names (NAME or NAME:PORT) of proxies admitted to the admin API.
    admin_token_generated: bool = False  # Made at start, so the banner prints it. A given token is never printed.
    proxy: str | None = None  # A real backend's origin. The API's traffic goes there, checked by control.proxy.
    proxy_fallback: bool = False  # With proxy, the mock serves what the backend does not (404, 501, refused).
    proxy_timeout: float = 30.0  # With proxy, seconds for a whole exchange with the backend. Past it, 502.
    validate_responses: bool = False  # A costly self-test mode. It turns a non-conforming answer into a 500.
    state: str = MEMORY  # Or redis://host:port/db, opened by mock_server.backends.
    workers: int = 1  # uvicorn worker processes. More than one needs a shared state.
    session_ttl: float = 1800.0  # Seconds a session (X-Mock-Session) may stay idle before it is gone.
    max_sessions: int = 100  # Sessions alive at once. One more is a 429 (mock_server.control.mock_sessions.registry).
    shutdown_timeout: float = 2.0  # Seconds from SIGINT or SIGTERM to exit. Requests still running then are cut.
    replica_name: str | None = None  # Names this replica in the journal. None is HOST:PID (mock_server.backends).

    def issuer_for(self, realm_path: str) -> str:
        """The identity realm's issuer. It is fixed for the life of the server, never taken from a request."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return self.issuer or f"http://{host}:{self.port}{realm_path}"


def is_loopback(host: str) -> bool:
    """Whether a bind to `host` is reachable from this machine only. The admin API then needs no token."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def new_admin_token() -> str:
    """A token for the admin API, for a bind other machines can reach."""
    return secrets.token_urlsafe(24)
