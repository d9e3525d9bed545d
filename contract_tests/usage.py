"""`UsageError`: what was asked does not describe a run (an option, a file it names): one line, exit 2.

A module of its own at the bottom, importing nothing, so that any layer can say so (the options, the TLS
trust of the client, the baseline) without importing another.
"""


class UsageError(Exception):
    """The options do not describe a run."""
