"""A zoo of real servers in front of the interface, each started as a process on a loopback port.

The suite must give the same verdict against every way a real deployment answers: the mock under
uvicorn (`mock`) and under hypercorn (`mock`), behind nginx terminating TLS with a CA the test makes
(`nginx`, `tls`), behind a small HTTP/1.0 server that closes every connection and ends bodies at
EOF (`http10`); the DRF test backend under gunicorn is in `tests.support.drf` (`--server`).
"""
