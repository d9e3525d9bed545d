"""The store shared by replicas through Redis: `store.RedisStore` (one Lua script per operation, in
`scripts`), the key layout and order-preserving tokens (`layout`), and each replica's local copy of
its reads, kept while Redis reports no change (`copy`).

May import: `spec` and the rest of `state`. The redis package is an optional dependency: only
`backends` opens this package, when `--state redis://` asks for it.
"""
