"""The keyring's renewal under workers: a 401 to a token another thread renewed meanwhile is sent again
with the current token, and is not counted as the target refusing the suite's credentials."""

from __future__ import annotations

import itertools

from contract_tests.client.keyring import Keyring, Realm

REALM = Realm("http://127.0.0.1:1/token", "shop-dev", "secret")


def keyring() -> Keyring:
    numbers = itertools.count(1)
    return Keyring(None, None, REALM, lambda realm: (f"opaque-{next(numbers)}", None))


def test_a_401_to_a_token_renewed_meanwhile_is_sent_again_and_is_no_refusal() -> None:
    keys = keyring()
    expected = {"Authorization": f"Bearer {keys.token}"}
    sent_before = keys.current(expected)
    keys._fetched_at = 0.0  # old enough to renew
    assert keys.answered(keys.current(expected), 401, expected)  # this thread's 401 renews the token
    assert keys.current(expected) != sent_before
    refused = keys.refused
    assert keys.answered(sent_before, 401, expected)  # another thread's request, out with the old token
    assert keys.refused == refused


def test_a_401_to_the_current_token_still_counts_as_a_refusal() -> None:
    keys = keyring()
    expected = {"Authorization": f"Bearer {keys.token}"}
    assert not keys.answered(keys.current(expected), 401, expected)  # too young to renew: judged as is
    assert keys.refused == 1


def test_a_401_to_a_token_the_suite_never_had_is_judged_as_is() -> None:
    keys = keyring()
    expected = {"Authorization": f"Bearer {keys.token}"}
    assert not keys.answered({"Authorization": "Bearer forged"}, 401, expected)
    assert keys.refused == 0
