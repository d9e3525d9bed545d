"""A surface is a mount point of the interface, such as the backend or the gateway, and the credentials sent there.

It is plain data, importing nothing, so that the judging can name the surface it calls without the
target that built it (client/target.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Surface:
    """A mount point of the interface and what the suite sends there."""

    name: str
    base_url: str
    operations: tuple[str, ...]
    """Every operation served there. `--include` narrows what is tested, not what can be called."""
    headers: dict[str, str]
    """The credentials every conformance request carries."""
    accepted: dict[str, dict[str, str]]
    """Each credential that must be accepted on its own, by name."""
    refused: dict[str, dict[str, str]] = field(default_factory=dict)
    """Each credential that must be refused, by name."""

    def url(self, path: str) -> str:
        return self.base_url.rstrip("/") + path
