"""Test sessions, so that parallel tests do not see each other's writes. This package holds:

- `registry`, which names them and keeps this process's. It holds the `Sessions` protocol and
  `SessionRegistry`, whose sessions are overlays over the seed that expire.
- `redis`, which shares them between replicas.
- `scope`, which makes a request's session store current for the handlers (`ScopedStore`).

It may import what `control` may.
"""
