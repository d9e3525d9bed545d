"""The state the API serves. This package holds:

- The `store.Store` protocol and its domain errors, such as NotFound and Conflict.
- The in-memory store (`memory`).
- The copy-on-write overlay a session writes to (`overlay`).
- Fixture loading (`fixtures`).
- The shared store in Redis (`redis/`).

Large data sets are written by `shop-mock generate` (mock_server/generate.py), a tool outside this
layer. This package may import `spec` only. Nothing here knows HTTP, so it imports no Starlette,
Connexion, uvicorn or httpx.
"""
