"""A stateful mock of the shop API, generated from the spec in openapi/.

The folders are the architecture, as ARCHITECTURE.md says and tests/project/test_architecture.py
enforces. `spec/` is at the bottom, then `state/` and `http/`, `realm/`, `api/` and `control/`. This
level holds only the composition:

- `app`, with create_app.
- `cli`, which nothing imports.
- `settings`.
- `backends`, the store and sessions the settings select.
- `replicas`.
"""

import warnings

# Starlette 1.x warns about httpx at every Connexion import (Connexion imports its test client).
warnings.filterwarnings("ignore", message=".*httpx2.*")
