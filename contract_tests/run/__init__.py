"""One run against one target: the command line as data, the order of the parts into one ledger,
their scheduling and guard, interrupts, replay, and the same run as pytest items.

May import: every layer of the suite but the entry points.
"""
