"""`UsageError` says that what was asked does not describe a run. It is one line and exit 2.

What was asked may be an option or a file an option names. This is a module of its own at the bottom,
importing nothing, so that any layer can say so without importing another. The options, the TLS trust
of the client and the baseline all do.
"""


class UsageError(Exception):
    """The options do not describe a run."""
