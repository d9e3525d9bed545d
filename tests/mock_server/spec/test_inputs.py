"""A routing path's segment stands for exactly one identifier (mock_server/spec/inputs.py): any text
escaped as a segment comes back whole, and the segment holds nothing a router splits or stops at."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from mock_server.spec.inputs import ESCAPED_IN_SEGMENTS, escape_segment, unescape_segment

PIECES = [*ESCAPED_IN_SEGMENTS, *ESCAPED_IN_SEGMENTS.values(), "2", "F", "0", "A", "5", "x"]
ESCAPY = st.lists(st.sampled_from(PIECES)).map("".join)
"""Text made of the escaped characters, their escapes and the pieces of them: where a wrong order of
replacements would show."""


@given(st.text() | ESCAPY)
def test_any_identifier_comes_back_whole_from_its_segment(identifier: str) -> None:
    segment = escape_segment(identifier)
    assert unescape_segment(segment) == identifier
    assert "/" not in segment and "\n" not in segment


def test_a_segment_without_escapes_is_the_identifier() -> None:
    assert unescape_segment("Classic Cars") == escape_segment("Classic Cars") == "Classic Cars"
    assert unescape_segment("a%0Ab%2Fc%25d") == "a\nb/c%d"
