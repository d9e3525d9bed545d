"""The run's identity space (contract_tests/identities.py): what a fresh string keeps of its stem."""

from __future__ import annotations

import itertools
import random

from hypothesis import given
from hypothesis import strategies as st

from contract_tests.identities import COUNTER_DIGITS, Identities


@given(
    stem=st.text(min_size=0, max_size=80),
    limit=st.integers(min_value=1, max_value=80),
    counts=st.lists(st.integers(min_value=1, max_value=10**COUNTER_DIGITS - 1), min_size=2, max_size=2, unique=True),
)
def test_a_string_keeps_the_same_part_of_its_stem_whatever_the_counter_and_stays_within_max_length(
    stem: str, limit: int, counts: list[int]
) -> None:
    """The counter is the order in which the run's parts asked: the timing's. When the stem kept was cut to
    the counter's digits, "a.b" became "a.~mark99" or "a~mark100", and a target that refuses a "." answered
    the same generated case otherwise in a run with more workers."""
    values = []
    for count in counts:
        identities = Identities(random.Random(1))
        identities._counter = itertools.count(count)  # as if other parts had made count - 1 first
        values.append(identities.string({"maxLength": limit}, stem))
    kept = [
        value[: len(value) - len(str(count)) - len(identities.mark) - 1]
        for value, count in zip(values, counts, strict=True)
    ]
    assert all(len(value) <= limit for value in values)
    if limit >= 1 + len(identities.mark) + COUNTER_DIGITS:  # a shorter field keeps the counter's last digits
        assert kept[0] == kept[1] and stem.startswith(kept[0])
        assert values[0] != values[1]
