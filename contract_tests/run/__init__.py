"""One run against one target.

It holds the command line as data and the order of the parts that report into one ledger. It also
holds their scheduling and guard, interrupts, replay, and the same run as pytest items.

May import: every layer of the suite but the entry points.
"""
