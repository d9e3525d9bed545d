"""How the suite reaches a target: bounded HTTP clients, pacing, credentials and the surfaces.

It knows HTTP and not the contract's rules. `target` composes the pieces.

May import: the suite's top-level modules (the bottom layer) only.
"""
