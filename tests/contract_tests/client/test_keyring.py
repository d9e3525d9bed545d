"""The keyring's renewal under workers: a 401 to a token another thread renewed meanwhile is sent again
with the current token, and is not counted as the target refusing the suite's credentials. Its renewal
when the realm's clock and this machine's disagree: by `expires_in`, or the run stops."""

from __future__ import annotations

import itertools
import time

import pytest

from contract_tests.client.keyring import CredentialsLost, Keyring, Realm
from tests.support.suite import token_expiring_at

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


def counting_realm(exp_from_now: float, expires_in: float | None) -> tuple[Keyring, list[str]]:
    """A keyring whose realm issues tokens with `exp` at `exp_from_now` seconds on this machine's clock."""
    fetched: list[str] = []

    def fetch(realm: Realm) -> tuple[str, float | None]:
        fetched.append(token_expiring_at(int(time.time() + exp_from_now)))
        return fetched[-1], expires_in

    return Keyring(None, None, REALM, fetch), fetched


@pytest.mark.parametrize("skew", [-3600.0, -1.0, 0.0])
def test_a_token_already_past_its_exp_is_renewed_by_its_expires_in_not_at_every_request(skew: float) -> None:
    """The realm's clock behind this machine's: by `exp` every token was due at once, and every request
    fetched a new one."""
    keys, fetched = counting_realm(skew, 300.0)
    tokens = {keys.token for _ in range(50)}
    assert tokens == {fetched[0]} and len(fetched) == 1
    keys._expires = time.time()  # its expires_in has passed
    assert keys.token == fetched[1] and len(fetched) == 2


def test_a_token_still_valid_by_its_exp_is_renewed_by_the_earlier_of_the_two() -> None:
    keys, fetched = counting_realm(60.0, 300.0)
    assert keys.token == fetched[0]
    assert keys._expires is not None and keys._expires <= time.time() + 60


def test_a_token_past_its_exp_without_expires_in_stops_the_run_naming_the_clocks() -> None:
    with pytest.raises(CredentialsLost) as raised:
        counting_realm(-3600.0, None)
    message = str(raised.value)
    assert "\n" not in message and "clock" in message and "expires_in" in message, message


@pytest.mark.parametrize("exp", [float("nan"), float("inf")])
def test_an_exp_that_is_no_time_is_no_expiry(exp: float) -> None:
    """A token's `exp` that is not a finite number says nothing of when it expires: it is ignored."""
    token = token_expiring_at(exp)
    keys = Keyring(None, token, None, lambda realm: ("", None))
    assert keys.token == token and keys._expires is None
