"""The verdicts: Schemathesis' plans, the dedicated domain tests and the consumer contracts.

Schemathesis' plans are `conformance` and `engine`, the domain tests are in `domain/`, and the consumer
contracts in `consumer/`. Each reports to the ledger and never renders it.

May import: the bottom layer, `client` and `outcome` (but no renderer).
"""
