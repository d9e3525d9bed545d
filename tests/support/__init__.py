"""Helpers of the project's own tests, imported by test modules and never collected as tests."""
