"""`--log-format json` (issue 39): every line of a real `shop-mock` process's log is one JSON object,
a hostile request's line included, with its secrets masked as the journal masks them."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from mock_server.arguments import parse_settings
from tests.conftest import API_KEY_HEADERS, BACKEND
from tests.mock_server.control.test_metrics import shop_mock

SECRETS = ("hunter2", "s3cret-client", "tok-in-query", "bearer-secret", "cookie-secret")
HUGE = "x" * 20_000  # within the head limit (32 KiB), far over a logged value's bound


def test_a_hostile_request_is_one_valid_line_with_its_secrets_masked(tmp_path: Path) -> None:
    log = tmp_path / "mock.log"
    with shop_mock(log, "--log-format", "json", "--log-level", "info") as origin:
        hostile = httpx.post(
            f"{origin}/realms/shop/protocol/openid-connect/token",
            params={"access_token": "tok-in-query", "note": 'line\r\n{"forged": true}\u2028\x00', "huge": HUGE},
            data={"grant_type": "password", "username": "dev", "password": "hunter2", "client_secret": "s3cret-client"},
            headers={"Authorization": "Bearer bearer-secret", "Cookie": "KEYCLOAK_SESSION=cookie-secret"},
        )
        assert hostile.status_code < 500
        assert httpx.get(f"{origin}{BACKEND}/productlines/", headers=API_KEY_HEADERS).status_code == 200
    lines = log.read_text(encoding="utf-8").splitlines()
    events = [json.loads(line) for line in lines]  # every line, uvicorn's and the banner's too, is one object
    assert all(isinstance(event, dict) and {"time", "level", "logger"} <= event.keys() for event in events)
    assert [event["event"] for event in events if event.get("event") == "serving"] == ["serving"], lines
    requests = [event for event in events if event.get("event") == "request"]
    token_request = [event for event in requests if event["operation"] == "realm"]
    assert len(token_request) == 1, requests
    assert token_request[0]["method"] == "POST" and token_request[0]["status"] == hostile.status_code
    assert "access_token=***" in token_request[0]["path"] and len(token_request[0]["path"]) < 2_000
    listed = [event for event in requests if event["operation"] == "list_product_lines"]
    assert [(event["status"], event["session"], event["fault"]) for event in listed] == [(200, None, None)]
    assert {"duration_ms", "replica"} <= listed[0].keys()
    whole = log.read_text(encoding="utf-8")
    assert not [secret for secret in SECRETS if secret in whole]
    assert '"forged"' not in whole.replace('\\"forged\\"', "")  # the quote stays escaped inside its string


def test_the_log_format_comes_from_the_command_line() -> None:
    assert parse_settings(["--log-format", "json"]).log_format == "json"
    assert parse_settings([]).log_format == "text"
