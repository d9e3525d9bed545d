"""The masking rule on the shapes a credential takes that a login does not show, and in the access log
of the real mock process."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from mock_server.http import masking
from tests.conftest import TOKEN_PATH
from tests.mock_server.test_cli_usage import mock_process, stop

FORM = "application/x-www-form-urlencoded"


def test_a_field_name_is_compared_decoded_as_the_realm_reads_it() -> None:
    assert masking.form("grant_type=password&pass%77ord=s3cret&user+name=a") == (
        "grant_type=password&pass%77ord=***&user+name=a"
    )


def test_a_realm_request_is_masked_as_a_form_whatever_its_type() -> None:
    for content_type in ("", "text/plain", "application/json"):
        shown = masking.body("client_id=shop-dev&client_secret=s3cret", content_type, realm=True, request=True)
        assert "s3cret" not in shown, content_type


def test_json_credentials_are_masked_at_any_depth_and_other_json_is_kept_as_sent() -> None:
    nested = json.dumps({"login": [{"password": "s3cret", "user": "a"}], "code": {"x": 1}})
    assert json.loads(masking.body(nested, "application/json", realm=False, request=True)) == {
        "login": [{"password": "***", "user": "a"}],
        "code": "***",
    }
    plain = '{"productline": "Rockets",  "textdescription": "Up."}'
    assert masking.body(plain, "application/json", realm=False, request=True) == plain


@pytest.mark.parametrize(
    ("text", "realm", "shown"),
    [
        ('{"access_token":"eyJ', True, "***"),  # the realm's, cut at the journal's limit
        ('{"password":"s3cr', False, "***"),  # anyone's, naming a credential
        ('{"productline":"Rock', False, '{"productline":"Rock'),  # nothing to hide: kept
    ],
)
def test_json_that_does_not_parse_is_masked_whole_when_it_may_hold_a_credential(
    text: str, realm: bool, shown: str
) -> None:
    assert masking.body(text, "application/json; charset=utf-8", realm=realm, request=False) == shown


def test_json_nested_too_deep_to_walk_is_judged_like_json_that_does_not_parse() -> None:
    deep = "[" * 600 + '"password"' + "]" * 600
    assert masking.body(deep, "application/json", realm=False, request=True) == "***"
    harmless = "[" * 600 + "]" * 600
    assert masking.body(harmless, "application/json", realm=False, request=True) == harmless


def test_a_realm_response_is_shown_only_as_json_a_form_or_a_page() -> None:
    assert masking.body("<h1>Sign in</h1>", "text/html; charset=utf-8", realm=True, request=False) == "<h1>Sign in</h1>"
    assert masking.body("opaque", "application/octet-stream", realm=True, request=False) == "***"


def test_headers_keep_names_schemes_and_attributes_and_mask_values() -> None:
    raw = [
        (b"Authorization", b"Basic c2hvcDpzM2NyZXQ="),
        (b"Proxy-Authorization", b"s3cret"),
        (b"Cookie", b"KEYCLOAK_IDENTITY=s3cret; mock_session=a"),
        (b"Set-Cookie", b'KEYCLOAK_IDENTITY=""; expires=Thu, 01 Jan 1970 00:00:00 GMT; Max-Age=0; Path=/realms/shop'),
        (b"Set-Cookie", b"AUTH_SESSION_ID=s3cret; HttpOnly"),
        (b"Referer", b"http://localhost:5173/callback?code=s3cret&state=x#id_token=s3cret"),
    ]
    assert masking.headers(raw) == {
        "authorization": "Basic ***",
        "proxy-authorization": "***",
        "cookie": "KEYCLOAK_IDENTITY=***; mock_session=***",
        "set-cookie": (
            "KEYCLOAK_IDENTITY=***; expires=Thu, 01 Jan 1970 00:00:00 GMT; Max-Age=0; Path=/realms/shop, "
            "AUTH_SESSION_ID=***; HttpOnly"
        ),
        "referer": "http://localhost:5173/callback?code=***&state=x#id_token=***",
    }


def test_the_access_log_masks_the_credentials_in_request_lines(tmp_path: Path) -> None:
    with mock_process("--access-log", port_file=tmp_path / "port") as (process, origin):
        with httpx.Client(base_url=origin, timeout=30) as http:
            password_grant = {
                "grant_type": "password",
                "client_id": "shop-dev",
                "client_secret": "shop-dev-secret",
                "username": "shop-user",
                "password": "shop-password",
                "scope": "openid",
            }
            id_token = http.post(TOKEN_PATH, data=password_grant).json()["id_token"]
            logout = http.get("/realms/shop/protocol/openid-connect/logout", params={"id_token_hint": id_token})
            assert logout.status_code == 200
            http.get("/shop/api/v1/ui/oauth2-redirect.html", params={"code": "c0de-s3cret", "state": "s1"})
        out, _ = stop(process)
    assert id_token not in out and "c0de-s3cret" not in out
    assert "/realms/shop/protocol/openid-connect/logout?id_token_hint=*** HTTP/1.1" in out
    assert "/shop/api/v1/ui/oauth2-redirect.html?code=***&state=s1 HTTP/1.1" in out


def test_the_journal_masks_a_multipart_forms_credentials_and_keeps_the_rest_as_sent() -> None:
    """Read back over real HTTP (`GET /__mock__/requests`), and the consumer contract recorded from it."""
    from mock_server.app import create_app
    from mock_server.settings import DEFAULT_API_KEY, Settings
    from tests.support.live import running

    files = {"productline": (None, "Rockets"), "password": (None, "s3cret"), "code": (None, "c0de\r\nmore")}
    with running(create_app(Settings())) as origin, httpx.Client(base_url=origin, timeout=10) as http:
        sent = http.post("/shop/api/v1/productlines/", files=files, headers={"X-API-Key": DEFAULT_API_KEY})
        assert sent.status_code < 500  # answered or refused, journaled either way
        [entry] = http.get("/__mock__/requests").json()
        contract = http.get("/__mock__/contract").json()
    shown = entry["request"]["body"]
    assert "s3cret" not in shown and "c0de" not in shown and "more" not in shown
    assert shown.count(masking.MASK) == 2 and 'name="productline"\r\n\r\nRockets\r\n' in shown
    assert shown.startswith("--") and shown.endswith("--\r\n")  # every other byte as sent
    assert "s3cret" not in json.dumps(contract)
    [interaction] = contract["interactions"]
    assert interaction["example"]["body"]["password"] == masking.MASK


@pytest.mark.parametrize(
    ("content_type", "text", "shown"),
    [
        # cut at the journal's limit inside a credential's value: the rest of it masked
        ("multipart/form-data; boundary=b", '--b\r\nContent-Disposition: form-data; name="password"\r\n\r\ns3c', None),
        # no boundary: nobody reads its parts; masked whole if it names a credential
        ("multipart/form-data", 'name="password"\r\n\r\ns3cret', masking.MASK),
        ("multipart/form-data", "nothing to hide", "nothing to hide"),
    ],
)
def test_a_multipart_form_that_does_not_parse_whole_is_masked_where_it_may_hold_a_credential(
    content_type: str, text: str, shown: str | None
) -> None:
    masked = masking.body(text, content_type, realm=False, request=True)
    assert "s3c" not in masked
    if shown is not None:
        assert masked == shown
