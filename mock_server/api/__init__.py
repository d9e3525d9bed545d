"""The interface's behaviour, as the contract states it: the routing table from operationId to
handler (`routing`), the handlers by collection (`handlers`), request validation (`validation`,
`formparsers`), pagination (`pagination`), path addressing (`addressing`), the API's credentials
(`security`), the fast path that answers valid requests past Connexion's layers (`fastpath`), and
`connexion_seam`, the one module touching Connexion's internals.

May import: `spec`, `state`, `http`, `realm`. Never `control`: the API works without the control plane.
"""
