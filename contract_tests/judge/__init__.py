"""The verdicts: Schemathesis' plans (`conformance`, `engine`), the dedicated domain tests (`domain/`)
and the consumer contracts (`consumer/`), each reporting to the ledger and never rendering it.

May import: the bottom layer, `client` and `outcome` (but no renderer).
"""
