"""What a run found and how it is shown: the `Ledger` every check reports to, the coverage, the
baseline, and the renderers, which read only the ledger.

May import: the suite's top-level modules (the bottom layer) only.
"""
