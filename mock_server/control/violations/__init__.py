"""The validation proxy's violations.

`memory` keeps this process's. `redis` shares them between the replicas of one Redis state. The
proxy (`control/proxy.py`) reports them here.

May import what `control` may.
"""
