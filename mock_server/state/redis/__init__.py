"""The store shared by replicas through Redis. This package holds:

- `store.RedisStore`, with one Lua script per operation in `scripts`.
- The key layout and order-preserving tokens (`layout`).
- Each replica's local copy of its reads, kept while Redis reports no change (`copy`).

It may import `spec` and the rest of `state`. The redis package is an optional dependency. So only
`backends` opens this package, when `--state redis://` asks for it.
"""
