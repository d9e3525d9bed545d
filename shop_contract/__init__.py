"""The shop contract as installed: the spec and the default fixtures, shipped as package data.

The repository's top-level `openapi/` and `fixtures/` are these packages (`shop_contract.openapi`,
`shop_contract.fixtures`, mapped by pyproject's `package-dir`), so there is one copy to edit and the
wheel carries it. `shop_contract.document` loads and dereferences the spec for the mock and the suite.
"""
