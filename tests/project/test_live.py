"""Serving a mock for a test (tests/support/live.py): its realm's key is made before the first connection,
also when the mock is wrapped in the middleware of a broken variant or a hostile target, so that the first
token is not kept waiting for an RSA key inside the suite's request deadline."""

from __future__ import annotations

import httpx
import pytest

from mock_server.app import create_app
from mock_server.realm.keys import KeyRing
from mock_server.settings import Settings
from tests.support import hostile
from tests.support.faults import Fault
from tests.support.live import realm_of, running


def test_the_realm_is_found_through_every_wrapper_and_none_without_one() -> None:
    app = create_app(Settings())
    wrapped = Fault(hostile.Hostile("GET", "/nothing", hostile.echo_headers, app=app), "GET", "/nothing")
    assert realm_of(wrapped) is app.realm is realm_of(app)
    assert realm_of(Fault(None, "GET", "/")) is None


def test_a_wrapped_mock_has_its_key_before_its_first_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[KeyRing] = []
    generated = KeyRing.generated

    def counted() -> KeyRing:
        made.append(generated())
        return made[-1]

    monkeypatch.setattr(KeyRing, "generated", counted)
    app = Fault(create_app(Settings()), "GET", "/nothing")
    with running(app) as origin:
        before = len(made)
        certs = httpx.get(f"{origin}/realms/shop/protocol/openid-connect/certs").json()
    assert before == len(made) == 1
    assert [key["n"] for key in certs["keys"]] == [made[0].jwks()["keys"][0]["n"]]
