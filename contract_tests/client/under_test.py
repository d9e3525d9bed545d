"""What is under test, as data: the surfaces, the credentials they were given, the keyring and the limits.

It is apart from client/target.py, which builds and probes it. So the run object (judge/run_context.py)
can hold a target without importing the HTTP probing and token fetching below it. The chain of imports
then stays within the suite's eight levels.
"""

from __future__ import annotations

from dataclasses import dataclass

from contract_tests.client.bounded import Limits
from contract_tests.client.keyring import Keyring
from contract_tests.client.surface import Surface


@dataclass(frozen=True)
class Credentials:
    """The API key and the bearer token given at the start."""

    api_key: str | None = None
    token: str | None = None

    def api_key_headers(self) -> dict[str, str]:
        return {} if self.api_key is None else {"X-API-Key": self.api_key}

    def bearer_headers(self) -> dict[str, str]:
        return {} if self.token is None else {"Authorization": f"Bearer {self.token}"}


@dataclass(frozen=True)
class Target:
    """One or two surfaces (backend, gateway) and how the suite reaches them."""

    surfaces: tuple[Surface, ...]
    credentials: Credentials
    """The credentials as they were at the start. Forged tokens are made from them."""
    keyring: Keyring
    """The credentials as they are now. Send `keyring.current(surface.headers)`."""
    limits: Limits

    def surface(self, name: str) -> Surface | None:
        return next((surface for surface in self.surfaces if surface.name == name), None)
