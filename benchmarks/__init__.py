"""Benchmarks of the mock and the contract suite: `python -m benchmarks NAME`, never part of the test run."""
