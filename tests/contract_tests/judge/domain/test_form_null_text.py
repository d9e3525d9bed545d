"""The spec's decision `form-text` judged by the suite: a target that takes a form's text `null` for null is
reported, by `patch_locality` on every run (it sends the text to each nullable string), and by `write_echo`
(in the run and when a finding is replayed or exported) whenever the generator sends that text.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qsl, urlencode

import httpx
import pytest

from contract_tests.outcome.standalone import broken, same_value
from mock_server.app import create_app
from mock_server.settings import Settings
from tests.support.faults import Fault, Scope
from tests.support.live import running
from tests.support.suite import credentials, shop_contract, violations

API = "/shop/api/v1"
URLENCODED = "application/x-www-form-urlencoded"


def null_text_as_null(scope: Scope, body: bytes) -> bytes:
    """A form parser taking the text `null` for null, as Connexion's did: the mock gets the empty value."""
    headers = dict(scope["headers"])
    if not headers.get(b"content-type", b"").startswith(URLENCODED.encode()):
        return body
    pairs = parse_qsl(body.decode(), keep_blank_values=True)
    return urlencode([(name, "" if value == "null" else value) for name, value in pairs]).encode()


def test_a_form_text_null_stored_as_null_is_caught_by_patch_locality(tmp_path: Path) -> None:
    variant = Fault(create_app(Settings()), "PATCH", f"{API}/.*", request=null_text_as_null)
    with running(variant) as origin:
        args = ["--base-url", origin + API, *credentials(origin), "--seed", "3", "--profile", "fast", "--quiet"]
        only = ["--include", "patch_customer", "--no-conformance", "--checks", "patch_locality"]
        outcome = shop_contract([*args, *only], tmp_path)
    assert outcome.code == 1, outcome.stdout[-4000:] + outcome.stderr
    rules = [violation["rule"] for violation in violations(outcome)]
    assert any(f"alone to 'null' ({URLENCODED})" in rule and "got None" in rule for rule in rules), rules


@pytest.mark.parametrize(("sent", "stored", "same"), [("null", None, False), ("None", None, False), ("", None, True)])
def test_write_echo_tells_a_form_text_from_null(sent: str, stored: None, same: bool) -> None:
    assert same_value(sent, stored, form=True) is same
    assert same_value(stored, sent, form=True) is same  # the empty value read back as the text is wrong too
    request = {
        "method": "PATCH",
        "url": f"http://127.0.0.1{API}/customers/103/",
        "headers": [["Content-Type", URLENCODED]],
        "body": urlencode({"addressline2": sent}),
    }
    answer = httpx.Response(200, json={"customernumber": 103, "addressline2": stored})
    verdict = broken("write_echo", {}, [(request, answer)])
    assert (verdict is None) is same, verdict
