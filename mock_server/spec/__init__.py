"""The contract as data, the bottom layer: the loaded spec and its schemas (`schemas`), the operation
a request names (`operations`), strict decoding of inputs against the spec's bounds (`inputs`), the
mock's errors in the spec's Problem shape (`errors`), and the one rule bounding what a peer sent when
a message quotes it (`quoting`).

May import: nothing else of mock_server, and no web framework. Everything above reads the spec here.
"""
