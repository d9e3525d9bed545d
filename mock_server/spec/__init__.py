"""The contract as data, the bottom layer. This package holds:

- The loaded spec and its schemas (`schemas`).
- The operation a request names (`operations`).
- Strict decoding of inputs against the spec's bounds (`inputs`).
- The mock's errors in the spec's Problem shape (`errors`).
- The one rule bounding what a peer sent when a message quotes it (`quoting`).

It imports nothing else of mock_server, and no web framework. Everything above reads the spec here.
"""
