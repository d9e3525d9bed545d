"""What an accepted rename did, in the identifier check's words (contract_tests/judge/domain/immutability.py)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from contract_tests.judge.domain.immutability import outcome


@pytest.mark.parametrize(
    ("old", "new", "old_kept", "said"),
    [
        (200, 200, True, "the item was copied (the old and the new identifier both exist)"),
        (404, 200, True, "the item was moved (only the new identifier exists)"),
        (200, 404, False, "the item was changed in place (its other fields changed)"),
        (200, 500, True, "the item is kept, but reading the new identifier answers 500, not 404"),
        (200, 403, True, "the item is kept, but reading the new identifier answers 403, not 404"),
        (410, 404, False, "the item is gone (the old identifier answers 410, the new 404)"),
        (404, 404, False, "the item is gone (the old identifier answers 404, the new 404)"),
    ],
)
def test_an_accepted_rename_is_said_by_what_the_two_identifiers_answer(
    old: int, new: int, old_kept: bool, said: str
) -> None:
    """Read back after the rename: the old identifier, the new one, and whether the old item kept its fields."""
    assert outcome(SimpleNamespace(status=old), SimpleNamespace(status=new), old_kept) == said
