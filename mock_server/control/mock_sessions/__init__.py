"""Sessions for parallel tests: `registry` names them and keeps this process's (the `Sessions`
protocol, `SessionRegistry`: overlays over the seed that expire); `redis` shares them between
replicas; `scope` makes a request's session store current for the handlers (`ScopedStore`).

May import what `control` may.
"""
