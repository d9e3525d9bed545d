"""How a mock server is configured: one frozen value, built from CLI flags or by tests."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_API_KEY = "dev-api-key"
MEMORY = "memory"  # the state in the process; else the URL of the Redis database replicas share
DEFAULT_FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


@dataclass(frozen=True)
class Settings:
    host: str = "127.0.0.1"
    port: int = 8000
    fixtures: Path | None = DEFAULT_FIXTURES  # None: start empty
    api_keys: frozenset[str] = field(default_factory=lambda: frozenset({DEFAULT_API_KEY}))
    cors_origins: tuple[str, ...] = ("*",)
    log_level: str = "info"
    max_body_bytes: int = 1024 * 1024
    journal_size: int = 200
    token_ttl: int = 300
    fast_path: bool = True  # valid requests answered by mock_server.fastpath; off only to compare with Connexion
    validate_responses: bool = False  # a self-test mode: costly, turns a non-conforming answer into a 500
    state: str = MEMORY  # or redis://host:port/db (mock_server.state)
    workers: int = 1  # uvicorn worker processes; more than one needs a shared state
