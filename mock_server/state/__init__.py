"""The state the API serves: the `store.Store` protocol and its domain errors (NotFound, Conflict...),
the in-memory store (`memory`), the copy-on-write overlay a session writes to (`overlay`), fixture
loading and generation (`fixtures`, `generate`), and the shared store in Redis (`redis/`).

May import: `spec` only. Nothing here knows HTTP (no Starlette, Connexion, uvicorn or httpx).
"""
