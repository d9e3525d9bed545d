"""The state the API serves: the `store.Store` protocol and its domain errors (NotFound, Conflict...),
the in-memory store (`memory`), the copy-on-write overlay a session writes to (`overlay`), fixture
loading (`fixtures`), and the shared store in Redis (`redis/`). Large data sets are written by
`shop-mock generate` (mock_server/generate.py), a tool outside this layer.

May import: `spec` only. Nothing here knows HTTP (no Starlette, Connexion, uvicorn or httpx).
"""
