"""Fault injection. This package holds:

- `rules`, which says what a rule is and which request it meets.
- `memory`, which keeps this process's rules.
- `redis`, which shares them between the replicas of one Redis state.
- `middleware`, which applies them, and `Prefer: delay` too.
- `connection`, which reaches the server's connection to close it.

It may import what `control` may.
"""
