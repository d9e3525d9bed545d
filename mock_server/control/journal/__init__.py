"""The request journal: `memory` records each exchange in a ring buffer (the `RequestJournal`
middleware and the `Journal` it fills and queries); `redis` shares the replicas' journal through
Redis behind the same interface.

May import what `control` may.
"""
