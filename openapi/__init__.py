"""Package data `shop_contract.openapi`: the contract, `openapi.yaml` (this folder is the one to edit)."""
