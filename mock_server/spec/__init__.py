"""The contract as data, the bottom layer: the loaded spec and its schemas (`schemas`), the operation
a request names (`operations`), strict decoding of inputs against the spec's bounds (`inputs`), and
the mock's errors in the spec's Problem shape (`errors`).

May import: nothing else of mock_server, and no web framework. Everything above reads the spec here.
"""
