"""The journal of this process. Its ring of `Settings.journal_size` exchanges is the journal.

A dashboard page follows it through `subscribers`, called with each row as it is kept.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mock_server.control.journal.base import Entry, Journal


class MemoryJournal(Journal):
    """This process's exchanges. A shared state's replicas share theirs (`redis.RedisJournal`)."""

    def follow(self, subscriber: Callable[[tuple[Any, ...]], None]) -> None:
        """Call `subscriber` with each row from now on, for the dashboard's stream."""
        self.subscribers.append(subscriber)

    def unfollow(self, subscriber: Callable[[tuple[Any, ...]], None]) -> None:
        if subscriber in self.subscribers:
            self.subscribers.remove(subscriber)

    def entries(self) -> list[Entry]:
        """The exchanges kept, oldest first."""
        return [Entry(*row) for row in self.rows]

    def clear(self) -> None:
        self.rows.clear()
