"""The token endpoint's answer, as `fetch_token` reads it from a real loopback server: its `expires_in` in
every form token endpoints send it, and nothing else taken for one."""

from __future__ import annotations

import json

import pytest

from contract_tests.client.auth import fetch_token, lifetime
from contract_tests.client.bounded import Limits
from contract_tests.client.keyring import CredentialsError, Realm
from tests.support import hostile
from tests.support.live import running

TOKEN_PATH = "/token"


@pytest.mark.parametrize(
    ("expires_in", "seconds"),
    [(300, 300.0), (0.5, 0.5), ("3599", 3599.0), (" 60 ", 60.0), ("1.5", 1.5)],
)
def test_a_positive_number_or_its_text_is_the_lifetime(expires_in: object, seconds: float) -> None:
    assert lifetime(expires_in) == seconds


@pytest.mark.parametrize(
    "expires_in", [None, 0, -1, "0", "-300", "soon", "", "nan", "inf", "1e400", float("nan"), True, [300], {"s": 1}]
)
def test_anything_else_is_no_lifetime(expires_in: object) -> None:
    """`true` is a JSON boolean, not the number 1; an infinite or unknown lifetime leaves the token's `exp`."""
    assert lifetime(expires_in) is None


@pytest.mark.parametrize(("expires_in", "seconds"), [("3599", 3599.0), ("never", None)])
def test_a_token_endpoint_sending_expires_in_as_text_is_read(expires_in: str, seconds: float | None) -> None:
    """Azure AD's v1 endpoint sends `"expires_in": "3599"`: ignored, a realm whose clock is behind this
    machine's stopped the run, since its token's `exp` had passed (keyring.py)."""
    answer = json.dumps({"access_token": "a.b.c", "token_type": "Bearer", "expires_in": expires_in}).encode()
    assert fetched_from(answer) == ("a.b.c", seconds)


def test_an_answer_that_is_no_object_is_no_token() -> None:
    with pytest.raises(CredentialsError, match="answered no access_token a header can carry"):
        fetched_from(b'["a.b.c"]')


def fetched_from(answer: bytes) -> tuple[str, float | None]:
    """`fetch_token` from a realm on a loopback port whose token endpoint answers `answer`."""
    with running(hostile.Hostile("POST", TOKEN_PATH, hostile.json_answer(answer))) as origin:
        return fetch_token(Realm(origin + TOKEN_PATH, "shop-dev", "secret"), Limits(5.0, 1_000_000))
