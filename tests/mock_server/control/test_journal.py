"""The request journal over real HTTP: entries, masking, queries, count, clearing, bounds."""

from __future__ import annotations

import datetime
import json
from collections.abc import Iterator
from urllib.parse import quote, unquote

import httpx
import pytest

from mock_server.app import create_app
from mock_server.control.journal.base import BODY_LIMIT
from mock_server.settings import DEFAULT_API_KEY, Settings
from tests.conftest import API_KEY_HEADERS, BACKEND, TOKEN_PATH, fetch_token
from tests.support.live import running
from tests.support.realm_login import AUTH_PATH, CALLBACK, REALM, Authorization, form_action, redirect_params

PRODUCT = f"{BACKEND}/products/S10_1678/"


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    with (
        running(create_app(Settings(journal_size=50))) as origin,
        httpx.Client(base_url=origin, headers=API_KEY_HEADERS, timeout=30) as client,
    ):
        yield client


def journal(http: httpx.Client, **filters: str | int) -> list[dict[str, object]]:
    response = http.get("/__mock__/requests", params=filters)
    assert response.status_code == 200, response.text
    entries: list[dict[str, object]] = response.json()
    return entries


def count(http: httpx.Client, **filters: str | int) -> int:
    response = http.get("/__mock__/requests/count", params=filters)
    assert response.status_code == 200, response.text
    found: int = response.json()["count"]
    return found


def test_an_entry_has_the_whole_exchange_with_credentials_masked(http: httpx.Client) -> None:
    token = fetch_token(http)
    secrets = (token, DEFAULT_API_KEY, "session-secret")
    body = {"productline": "Rockets", "textdescription": "Up."}
    headers = {"Authorization": f"Bearer {token}", "Cookie": "sid=session-secret"}  # mock_session names a session
    created = http.post(f"{BACKEND}/productlines/", json=body, params={"trace": "1"}, headers=headers)
    entry = journal(http, operationId="create_product_line")[-1]
    assert (entry["method"], entry["path"], entry["query"], entry["status"]) == (
        "POST",
        f"{BACKEND}/productlines/",
        "trace=1",
        201,
    )
    assert entry["request"] == {
        "headers": entry["request"]["headers"],  # type: ignore[index]
        "body": json.dumps(body, separators=(",", ":")),
        "truncated": False,
    }
    assert entry["response"]["body"] == created.text  # type: ignore[index]
    assert entry["response"]["headers"]["content-type"] == "application/json"  # type: ignore[index]
    request_headers = entry["request"]["headers"]  # type: ignore[index]
    assert request_headers["authorization"] == "Bearer ***"
    assert request_headers["x-api-key"] == "***" and request_headers["cookie"] == "sid=***"
    everything = json.dumps(journal(http))
    assert not any(secret in everything for secret in secrets)


def test_bodies_are_truncated_at_the_documented_size(http: httpx.Client) -> None:
    long = "x" * (BODY_LIMIT * 2)
    http.post(f"{BACKEND}/productlines/", json={"productline": "Long", "htmldescription": long})
    entry = journal(http, operationId="create_product_line")[-1]
    for part in ("request", "response"):
        assert entry[part]["truncated"] is True  # type: ignore[index]
        assert len(entry[part]["body"]) == BODY_LIMIT  # type: ignore[index]


def test_queries_by_method_path_operation_status_and_time(http: httpx.Client) -> None:
    start = datetime.datetime.now(datetime.UTC).isoformat()
    for code in ("S10_1678", "S10_1949", "NOPE"):
        http.get(f"{BACKEND}/products/{code}/")
    http.delete(f"{BACKEND}/products/S10_1678/")  # 409: it has order details
    http.get(f"{BACKEND}/products/")
    assert [e["path"] for e in journal(http, operationId="get_product")] == [
        f"{BACKEND}/products/{code}/" for code in ("S10_1678", "S10_1949", "NOPE")
    ]
    assert [e["status"] for e in journal(http, method="delete")] == [409]
    assert [e["operationId"] for e in journal(http, path=PRODUCT)] == ["get_product", "delete_product"]
    assert count(http, status="4xx") == 2 and count(http, status=404) == 1
    assert count(http, operationId="get_product", status=200) == 2
    assert count(http, since=start) == 5 and count(http, until=start) == 0
    later = (datetime.datetime.now(datetime.UTC) + datetime.timedelta(seconds=5)).timestamp()
    assert count(http, since=later) == 0
    assert [e["path"] for e in journal(http, operationId="get_product", limit=1)] == [f"{BACKEND}/products/NOPE/"]


def test_a_bad_filter_is_400_naming_it(http: httpx.Client) -> None:
    for filters, named in (
        ({"colour": "red"}, "colour"),
        ({"status": "fourhundred"}, "status"),
        ({"since": "yesterday"}, "since"),
        ({"since": "nan"}, "since"),
        ({"until": "inf"}, "until"),
        ({"since": "-1e999"}, "since"),
        ({"operationId": "launch"}, "launch"),
        ({"limit": "-1"}, "limit"),
    ):
        for path in ("/__mock__/requests", "/__mock__/requests/count"):
            response = http.get(path, params=filters)
            assert response.status_code == 400 and named in response.json()["detail"], (path, filters)


def test_delete_clears_and_the_journal_is_bounded(http: httpx.Client) -> None:
    http.get(PRODUCT)
    assert http.delete("/__mock__/requests").status_code == 204
    assert count(http) == 0  # the admin API is not recorded
    for _ in range(60):
        http.get(PRODUCT)
    entries = journal(http)
    assert len(entries) == 50  # Settings(journal_size=50)
    assert entries[-1]["path"] == PRODUCT and entries[0]["id"] < entries[-1]["id"]


def test_a_browser_login_leaves_no_code_session_cookie_or_token_in_the_journal() -> None:
    admin = {"Authorization": "Bearer journal-admin-token"}
    user = {"username": "shop-user", "password": "shop-password"}
    app = create_app(Settings(admin_token="journal-admin-token"))
    with running(app) as origin, httpx.Client(base_url=origin, timeout=30) as browser:
        authorization = Authorization()
        page = browser.get(AUTH_PATH, params=authorization.params())
        login = browser.post(form_action(page.text), data=user)
        redirect = redirect_params(login, CALLBACK)
        tokens = browser.post(TOKEN_PATH, data=authorization.token_form(redirect["code"])).json()
        refresh = {"grant_type": "refresh_token", "client_id": "shop-web", "refresh_token": tokens["refresh_token"]}
        renewed = browser.post(TOKEN_PATH, data=refresh).json()
        in_fragment = browser.get(AUTH_PATH, params=Authorization().params(response_mode="fragment"))
        assert in_fragment.headers["location"].startswith(f"{CALLBACK}#code=")  # the SSO cookie, no form
        logout = browser.get(f"{REALM}/protocol/openid-connect/logout", params={"id_token_hint": renewed["id_token"]})
        assert logout.status_code == 200
        secrets = {
            redirect["code"],
            redirect["session_state"],
            in_fragment.headers["location"].split("code=")[1].split("&")[0],
            authorization.verifier,
            user["password"],
            *browser.cookies.values(),
            *(grant[kind] for grant in (tokens, renewed) for kind in ("access_token", "refresh_token", "id_token")),
        }
        assert len(secrets) == 12  # two cookies: the login binding and the SSO secret
        entries = browser.get("/__mock__/requests", headers=admin).json()
    everything = json.dumps(entries)
    assert not [secret for secret in secrets if secret in everything]
    served, posted, exchanged, refreshed, fragment, logged_out = entries
    assert served["response"]["headers"]["set-cookie"].startswith("AUTH_SESSION_ID=***; HttpOnly; Path=/realms/shop")
    assert posted["request"]["headers"]["cookie"] == "AUTH_SESSION_ID=***"
    assert posted["request"]["body"] == "username=shop-user&password=***"
    assert "KEYCLOAK_IDENTITY=***; HttpOnly" in posted["response"]["headers"]["set-cookie"]
    location = posted["response"]["headers"]["location"]
    assert location.startswith(f"{CALLBACK}?code=***&session_state=***&state={authorization.state}&iss=")
    assert "code=***" in exchanged["request"]["body"] and "code_verifier=***" in exchanged["request"]["body"]
    assert "grant_type=authorization_code" in exchanged["request"]["body"]
    shown = json.loads(exchanged["response"]["body"])
    assert [shown[kind] for kind in ("access_token", "refresh_token", "id_token", "session_state")] == ["***"] * 4
    assert shown["token_type"] == "Bearer"
    assert "refresh_token=***" in refreshed["request"]["body"]
    assert fragment["response"]["headers"]["location"].startswith(f"{CALLBACK}#code=***&session_state=***&")
    assert logged_out["query"] == "id_token_hint=***"


@pytest.mark.parametrize("identifier", ["a/b", "v1.2", "a/b.c/", "%", "x y"])
def test_an_identifier_with_reserved_characters_keeps_its_operation_and_its_path_as_sent(
    http: httpx.Client, identifier: str
) -> None:
    """An escaped `/` in an identifier is not a path separator: the entry names the operation, its
    path is the one sent (a copied request asks for the same resource), and the path filter finds it
    written either way."""
    assert http.post(f"{BACKEND}/productlines/", json={"productline": identifier}).status_code == 201
    sent = f"{BACKEND}/productlines/{quote(identifier, safe='')}/"
    assert http.get(sent).status_code == 200
    entry = journal(http, limit=1)[0]
    assert (entry["operationId"], entry["path"], entry["status"]) == ("get_product_line", sent, 200)
    assert [e["id"] for e in journal(http, operationId="get_product_line")] == [entry["id"]]
    assert [e["id"] for e in journal(http, path=sent)] == [entry["id"]]
    assert [e["id"] for e in journal(http, path=unquote(sent))] == [entry["id"]]
