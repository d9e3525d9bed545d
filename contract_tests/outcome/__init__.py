"""What a run found and how it is shown.

It holds the `Ledger` every check reports to, the coverage, the baseline and the renderers. The
renderers read only the ledger.

May import: the suite's top-level modules (the bottom layer) only.
"""
