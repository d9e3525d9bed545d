"""`auth_matrix`'s near misses of an API key: each one a header value a client can send, none the key itself."""

from __future__ import annotations

import h11
from hypothesis import given
from hypothesis import strategies as st

from contract_tests.judge.domain.auth_matrix import key_near_misses

# A header value as RFC 9110 allows it (visible ASCII, spaces inside only): what a user's key can be.
VISIBLE = st.characters(min_codepoint=0x21, max_codepoint=0x7E)
KEYS = st.text(VISIBLE | st.just(" "), min_size=1).map(str.strip).filter(bool)


def sendable(value: str) -> bool:
    """Whether h11, which httpx sends with, takes `value` as a header value."""
    try:
        h11.Request(method="GET", target="/", headers=[("host", "a"), ("x-api-key", value)])
    except h11.LocalProtocolError:
        return False
    return True


@given(KEYS)
def test_every_near_miss_of_a_key_can_be_sent_and_is_not_the_key(key: str) -> None:
    misses = key_near_misses(key)
    assert misses, key
    assert all(sendable(miss) and miss != key for miss in misses.values()), misses


def test_a_one_character_key_has_no_space_inside_and_keeps_its_other_misses() -> None:
    assert key_near_misses("k") == {
        "api_key_last_character_changed": "A",
        "api_key_one_character_more": "kk",
        "api_key_case_swapped": "K",
        "api_key_percent_encoded": "%6B",
    }
