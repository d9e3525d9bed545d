"""A collation ignoring letter case for all of Unicode, registered on every SQLite connection.

MySQL's default collation compares identifiers without their letter case, and a Django team on MySQL
gets that in every lookup, unique index and ORDER BY without writing a line. SQLite's NOCASE folds
ASCII letters only, and the suite's identifiers hold non-ASCII ones, so the `case_insensitive`
configuration names this collation in its identifier columns instead. SQLite keeps no collation in
the database file: each connection must be given it before it touches such a column, hence Django's
`connection_created` signal (each gunicorn worker opens its own connection after the fork).
"""

from __future__ import annotations

from typing import Any

from django.db.backends.base.base import BaseDatabaseWrapper

NAME = "shop_ci"


def compare(left: str, right: str) -> int:
    """Order by the case-folded form: the order the decision `list-order` admits; equal when only case differs."""
    folded_left, folded_right = left.casefold(), right.casefold()
    return (folded_left > folded_right) - (folded_left < folded_right)


def register(sender: Any, connection: BaseDatabaseWrapper, **kwargs: Any) -> None:
    """Django's `connection_created` receiver: the collation on the new SQLite connection."""
    if connection.vendor == "sqlite":
        connection.connection.create_collation(NAME, compare)
