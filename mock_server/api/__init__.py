"""The interface's behaviour, as the contract states it. This package holds:

- The routing table from operationId to handler (`routing`).
- The handlers by collection (`handlers`).
- Request validation (`validation`, `formparsers`).
- Pagination (`pagination`) and path addressing (`addressing`).
- The API's credentials (`security`).
- The fast path that answers valid requests past Connexion's layers (`fastpath`).
- `connexion_seam`, the one module touching Connexion's internals.

It may import `spec`, `state`, `http` and `realm`. It never imports `control`, because the API works
without the control plane.
"""
