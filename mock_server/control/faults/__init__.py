"""Fault injection: `rules` says what a rule is and which request it meets, `memory` keeps this
process's rules, `redis` shares them between the replicas of one Redis state, `middleware` applies
them (and `Prefer: delay`), and `connection` reaches the server's connection to close it.

May import what `control` may.
"""
