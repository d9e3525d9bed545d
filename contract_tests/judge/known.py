"""What the run knows about the target's data before it starts testing, and what it made to know it.

- `references` holds an identifier in use for each field naming another collection's item, such as
  a product's `productline`. On an empty target the suite creates the item (a product line before
  its products) and removes it at the end of the run.
- `external` holds the values the target already serves for each field naming something outside
  this interface (`x-external-reference`). An example is a customer's sales representative, who is an
  employee. The suite sends only those, or null when it knows none, since a backend may refuse a
  number it cannot know.
- `items` holds, for each collection's identifier (the path parameter naming an item), the items its
  list's first page showed when the run started. They are the items a generated request may address
  (judge/hooks.py). They are fixed before testing, so that what is generated never depends on what
  other parts wrote since.
- `identities` is the run's one identifier allocator (see identities.py).

It is plain data, so that every check can read it. Learning it from the target is judge/discovery.py's
job.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from contract_tests.identities import Identities
from contract_tests.spec import Collection


@dataclass
class Known:
    identities: Identities
    references: dict[str, Any] = field(default_factory=dict)
    external: dict[str, list[Any]] = field(default_factory=dict)
    items: dict[str, list[Any]] = field(default_factory=dict)
    made: list[tuple[Collection, Any]] = field(default_factory=list)
    """Items created so that references exist, as (collection, identifier). They are removed at the end of the run."""
    setup: list[str] = field(default_factory=list)
    """The requests that created `made`, as curl commands. Every reproduction on this target starts with them."""

    def external_value(self, name: str, prop: dict[str, Any]) -> Any:
        """A value of an external reference the target serves, else null when nullable, else the example."""
        values = self.external.get(name) or []
        if values:
            return values[0]
        return None if prop.get("nullable") else prop.get("example")
