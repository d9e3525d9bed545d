"""The journal's masking rule on the shapes a credential takes that a login does not show."""

from __future__ import annotations

import json

import pytest

from mock_server import masking

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
