"""Real implementations of the shop interface, used as targets by the project's own tests."""
