"""A stateful mock of the shop API, generated from the spec in openapi/.

The folders are the architecture (ARCHITECTURE.md; tests/project/test_architecture.py enforces it): `spec/`
at the bottom, then `state/` and `http/`, `realm/`, `api/`, `control/`; at this level only the
composition: `app` (create_app), `cli` (which nothing imports), `settings`, `backends` (the store
and sessions the settings select) and `replicas`.
"""

import warnings

# Starlette 1.x warns about httpx at every Connexion import (Connexion imports its test client).
warnings.filterwarnings("ignore", message=".*httpx2.*")
