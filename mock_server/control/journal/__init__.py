"""The request journal, one concept in four modules.

`base` is what an exchange is and how the journal is read, with the `Journal` base class and its
ring. `memory` is this process's journal, and `redis` the one the replicas of a Redis state share.
`middleware` is the `RequestJournal` layer that fills either.

May import what `control` may.
"""
