"""Recording a consumer contract: GET /__mock__/contract and `shop-mock contract --out FILE`
(mock_server/control/contract.py), from real httpx traffic on a live mock."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import jsonschema
import pytest

from contract_tests.outcome import findings_file
from mock_server import cli
from mock_server.app import create_app
from mock_server.control.contract import read_response
from mock_server.settings import Settings
from shop_contract.document import digest, read
from tests.conftest import API_KEY_HEADERS, BACKEND
from tests.support.live import TRUSTED, running

API = "/shop/api/v1"
SCHEMA = findings_file.schema("consumer_contract.schema.json")


def front_end_traffic(http: httpx.Client, headers: dict[str, str] | None = None) -> None:
    """What a small front end does: list, create by form (one field left empty), read, patch, miss."""
    headers = {**API_KEY_HEADERS, **(headers or {})}
    http.get(f"{API}/productlines/", params={"page_size": 2}, headers=headers)
    http.post(f"{API}/productlines/", data={"productline": "Kites", "textdescription": ""}, headers=headers)
    http.get(f"{API}/productlines/Kites/", headers=headers)
    http.patch(f"{API}/productlines/Kites/", json={"htmldescription": None}, headers=headers)
    http.get(f"{API}/productlines/Nothing%20Here/", headers=headers)
    http.get(f"{API}/products/", headers=headers)


@pytest.fixture
def mock() -> Iterator[httpx.Client]:
    with running(create_app(Settings())) as origin, httpx.Client(base_url=origin, timeout=30, verify=TRUSTED) as http:
        yield http


def contract(http: httpx.Client, **params: str) -> dict[str, Any]:
    answer = http.get("/__mock__/contract", params=params)
    assert answer.status_code == 200, answer.text
    document: dict[str, Any] = answer.json()
    return document


def by_name(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {interaction["name"]: interaction for interaction in document["interactions"]}


def test_contract_has_one_shape_per_operation_and_request_kind(mock: httpx.Client) -> None:
    front_end_traffic(mock)
    mock.get(f"{API}/productlines/")  # the same operation without a query: another shape
    shapes = by_name(contract(mock, name="web"))
    assert sorted(shapes) == [
        "create_product_line#1",
        "get_product_line#1",
        "list_product_lines#1",
        "list_product_lines#2",
        "list_products#1",
        "patch_product_line#1",
    ]
    created = shapes["create_product_line#1"]["request"]
    assert created == {
        "path_parameters": [],
        "query_parameters": [],
        "media_type": "application/x-www-form-urlencoded",
        "body_fields": ["productline", "textdescription"],
        "empty_fields": ["textdescription"],
        "auth": ["ApiKeyAuth"],
    }
    patched = shapes["patch_product_line#1"]["request"]
    assert (patched["media_type"], patched["empty_fields"]) == ("application/json", ["htmldescription"])
    assert {
        tuple(shapes[name]["request"]["query_parameters"]) for name in shapes if name.startswith("list_product_l")
    } == {
        (),
        ("page_size",),
    }


def test_statuses_and_fields_received_are_recorded_per_status(mock: httpx.Client) -> None:
    front_end_traffic(mock)
    read_one = by_name(contract(mock))["get_product_line#1"]
    assert read_one["statuses"] == [200, 404]
    assert read_one["example"]["status"] == 200  # the example is the first answered 2xx
    item_fields = set(read_one["responses"]["200"]["fields"])
    assert {"productline", "textdescription", "htmldescription", "image"} <= item_fields
    listed = by_name(contract(mock))["list_products#1"]["responses"]["200"]
    assert listed["truncated"]  # a page of 20 products is more than the journal keeps of a body
    assert {"count", "next", "results", "results[].productcode", "results[].msrp"} <= set(listed["fields"])


def test_identifier_values_are_marked_as_references(mock: httpx.Client) -> None:
    front_end_traffic(mock)
    shapes = by_name(contract(mock))
    assert shapes["create_product_line#1"]["example"]["references"] == {"/body/productline": "productline"}
    read_one = shapes["get_product_line#1"]["example"]
    assert read_one["path"] == {"productline": "Kites"}
    assert read_one["references"] == {"/path/productline": "productline"}


@pytest.mark.parametrize("identifier", ["a/b", "v1.2", "a/b.c/"])
def test_an_identifier_with_a_slash_or_a_dot_is_recorded_as_its_operation(mock: httpx.Client, identifier: str) -> None:
    """The request for it is an interaction of its operation, with the identifier as sent unescaped,
    not "not an operation of the spec"."""
    created = mock.post(f"{BACKEND}/productlines/", json={"productline": identifier}, headers=API_KEY_HEADERS)
    assert created.status_code == 201
    assert mock.get(f"{BACKEND}/productlines/{quote(identifier, safe='')}/", headers=API_KEY_HEADERS).status_code == 200
    document = contract(mock)
    assert document["unrecorded"] == []
    assert by_name(document)["get_product_line#1"]["example"]["path"] == {"productline": identifier}


def test_contract_names_the_consumer_and_the_spec_and_is_valid_against_its_schema(mock: httpx.Client) -> None:
    front_end_traffic(mock)
    document = contract(mock, name="web-shop")
    jsonschema.Draft202012Validator(SCHEMA).validate(document)
    spec = read()
    assert (document["format"], document["version"], document["consumer"]) == ("shop-consumer-contract", 1, "web-shop")
    assert document["spec"] == {
        "title": spec["info"]["title"],
        "version": spec["info"]["version"],
        "digest": digest(spec),
    }


def test_the_same_traffic_gives_the_same_file() -> None:
    recorded = []
    for _ in range(2):
        with (
            running(create_app(Settings())) as origin,
            httpx.Client(base_url=origin, timeout=30, verify=TRUSTED) as http,
        ):
            front_end_traffic(http)
            recorded.append(http.get("/__mock__/contract").content)
    assert recorded[0] == recorded[1]
    assert b'"time"' not in recorded[0] and b'"id"' not in recorded[0]


def test_credentials_never_show(mock: httpx.Client) -> None:
    token = mock.post(
        "/realms/shop/protocol/openid-connect/token",
        data={"grant_type": "client_credentials", "client_id": "shop-dev", "client_secret": "shop-dev-secret"},
    ).json()["access_token"]
    bearer = {"Authorization": f"Bearer {token}"}
    mock.get("/customers/v1/customers/", headers=bearer)
    mock.post(f"{API}/productlines/", json={"productline": "Pw", "password": "hunter2"}, headers=API_KEY_HEADERS)
    text = mock.get("/__mock__/contract").text
    assert token not in text and "dev-api-key" not in text and "hunter2" not in text and "shop-dev-secret" not in text
    shapes = by_name(json.loads(text))
    assert shapes["list_customers#1"]["request"]["auth"] == ["JWTAuth"]
    assert shapes["list_customers#1"]["surface"] == "gateway"
    assert shapes["create_product_line#1"]["example"]["body"]["password"] == "***"


def test_each_session_has_its_own_contract(mock: httpx.Client) -> None:
    front_end_traffic(mock, {"X-Mock-Session": "alice"})
    mock.get(f"{API}/customers/", headers=API_KEY_HEADERS)
    alice = by_name(contract_of(mock, "alice"))
    assert "create_product_line#1" in alice and "list_customers#1" not in alice
    assert sorted(by_name(contract(mock))) == ["list_customers#1"]  # no header: the traffic naming no session


def contract_of(http: httpx.Client, session: str) -> dict[str, Any]:
    answer = http.get("/__mock__/contract", headers={"X-Mock-Session": session})
    assert answer.status_code == 200
    document: dict[str, Any] = answer.json()
    return document


def test_fault_answers_cut_bodies_and_other_paths_are_counted_as_unrecorded(mock: httpx.Client) -> None:
    rules = [{"fault": "status", "operationId": "list_products", "status": 503}]
    assert mock.put("/__mock__/faults", json=rules).status_code == 204
    mock.get(f"{API}/products/", headers=API_KEY_HEADERS)
    mock.get("/nowhere", headers=API_KEY_HEADERS)
    long_text = {"productline": "Long", "textdescription": "x" * 5000}
    mock.post(f"{API}/productlines/", data=long_text, headers=API_KEY_HEADERS)  # more than the journal keeps
    document = contract(mock)
    assert document["interactions"] == []
    assert {(u["operation"], u["reason"].split(" (")[0]) for u in document["unrecorded"]} == {
        ("list_products", "answered by an injected fault, not the mock"),
        ("-", "not an operation of the spec"),
        ("create_product_line", "a request body longer than the journal keeps"),
    }


@pytest.mark.parametrize(
    ("params", "named"),
    [
        ({"format": "xml"}, "format"),
        ({"bogus": "1"}, "bogus"),
        ({"name": ""}, "name"),
        ({"name": "x" * 201}, "name"),
        ({"name": "web\nConsumer evil: 0 interaction(s)"}, "name"),
        ({"name": "\x1b[2J"}, "name"),
        ({"name": "\x00"}, "name"),
    ],
)
def test_bad_parameters_are_400_naming_them(mock: httpx.Client, params: dict[str, str], named: str) -> None:
    answer = mock.get("/__mock__/contract", params=params)
    assert answer.status_code == 400
    assert named in answer.json()["detail"]


def test_text_format_is_a_readable_summary(mock: httpx.Client) -> None:
    front_end_traffic(mock)
    text = mock.get("/__mock__/contract", params={"format": "text", "name": "web"}).text
    assert text.startswith("Consumer web: 5 interaction(s) with Shop API")
    assert "create_product_line#1" in text and "textdescription=''" in text


def test_an_answer_cut_short_is_read_up_to_its_last_whole_member() -> None:
    whole = json.dumps({"count": 2, "results": [{"a": 1, "b": [1, 2]}, {"a": 2, "b": [3]}], "next": None})
    cut = whole.index(', {"a": 2') + 5  # inside the second item
    assert read_response(whole[:cut], truncated=True) == {"count": 2, "results": [{"a": 1, "b": [1, 2]}]}
    assert read_response('{"a": "x', truncated=True) is None
    assert read_response('{"a": 1, "b": "x, y, z', truncated=True) == {"a": 1}  # commas in a string left open
    assert read_response("[" * 100_000, truncated=True) is None


def test_shop_mock_contract_writes_the_file_and_prints_the_summary(mock: httpx.Client, tmp_path: Path) -> None:
    front_end_traffic(mock)
    out = tmp_path / "nested" / "web.json"
    command = [sys.executable, "-m", "mock_server", "contract", "--url", str(mock.base_url), "--out", str(out)]
    done = subprocess.run([*command, "--name", "web"], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(out.read_text()) == contract(mock, name="web")
    assert "create_product_line#1" in done.stdout and f"wrote {out}" in done.stdout


@pytest.mark.parametrize(
    ("option", "says"),
    [
        (["--name", ""], "--name must be 1 to 200 printable characters, not ''"),
        (["--name", "web\x1b[2J"], "--name must be 1 to 200 printable characters, not 'web\\x1b[2J'"),
        (["--session", "a b"], "--session 'a b': a session name is 1 to 64 characters"),
        (["--session", "x" * 65], "--session 'xxxx"),
    ],
)
def test_shop_mock_contract_refuses_a_name_the_mock_would_in_one_line(
    mock: httpx.Client, tmp_path: Path, option: list[str], says: str
) -> None:
    out = tmp_path / "web.json"
    command = [sys.executable, "-m", "mock_server", "contract", "--url", str(mock.base_url), "--out", str(out), *option]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2
    assert done.stderr.startswith(f"shop-mock: error: {says}")
    assert len(done.stderr.strip().splitlines()) == 1
    assert not out.exists()
    assert "\x1b" not in done.stderr


def test_shop_mock_contract_says_in_one_line_when_the_mock_is_not_there(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "mock_server", "contract", "--url", "http://127.0.0.1:9", "--out", "x.json"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, cwd=tmp_path, check=False)
    assert done.returncode == 2
    assert done.stderr.startswith("shop-mock: error: cannot read the contract from http://127.0.0.1:9")
    assert len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "x.json").exists()


def test_a_full_journal_is_said_in_the_contract() -> None:
    with (
        running(create_app(Settings(journal_size=3))) as origin,
        httpx.Client(base_url=origin, timeout=30, verify=TRUSTED) as http,
    ):
        front_end_traffic(http)  # six requests: the first three are gone
        document = contract(http)
        text = http.get("/__mock__/contract", params={"format": "text"}).text
    assert document["journal_full"] is True
    assert len(document["interactions"]) == 3
    assert "the journal was full" in text


def test_an_unfilled_journal_is_not_said_to_be_full(mock: httpx.Client) -> None:
    front_end_traffic(mock)
    assert contract(mock)["journal_full"] is False


def test_journal_size_is_an_option_of_the_mock() -> None:
    from mock_server.arguments import parse_settings

    assert parse_settings(["--journal-size", "5000"]).journal_size == 5000
    assert parse_settings(["--journal-size", "100000"]).journal_size == 100_000
    # 10**20 was an OverflowError's traceback at start; 10**9 a journal that could hold terabytes.
    for size in ("0", "-1", "100001", "99999999999999999999"):
        with pytest.raises(SystemExit) as exit_info:
            parse_settings(["--journal-size", size])
        assert exit_info.value.code == 2


def test_shop_mock_contract_prints_no_control_character_a_client_sent(mock: httpx.Client, tmp_path: Path) -> None:
    """Neither the command nor `?format=text`: an escape sequence or a line feed in a field's or a parameter's
    name is written as its escape, one line per interaction still."""
    hostile = {"productline": "Bells", "\x1b[2Jtitle": "x", "a\nConsumer evil: 9 interaction(s)\u2028": 1}
    mock.post(f"{API}/productlines/", json=hostile, headers=API_KEY_HEADERS)
    mock.get(f"{API}/productlines/?%1b%5b31mred=1", headers=API_KEY_HEADERS)
    command = [sys.executable, "-m", "mock_server", "contract", "--url", str(mock.base_url), "--out", "c.json"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, cwd=tmp_path, check=False)
    assert done.returncode == 0, done.stderr
    text = mock.get("/__mock__/contract", params={"format": "text"}).text
    for shown in (done.stdout.removesuffix("wrote c.json\n"), text):
        lines = shown.splitlines()
        assert len(lines) == 3 and lines[0].startswith("Consumer consumer: 2 interaction(s)"), shown
        assert all(line.isprintable() for line in lines), shown
        assert "\\x1b[2Jtitle" in shown and "\\x1b[31mred" in shown and "a\\nConsumer evil" in shown, shown
    assert "\x1b[2Jtitle" in json.loads((tmp_path / "c.json").read_text())["interactions"][0]["request"]["body_fields"]


def test_replicas_sharing_a_journal_in_redis_record_the_same_contract(redis_url: str) -> None:
    """Two apps on one Redis state: the traffic through one, the contract read from the other is the
    same as one memory mock's."""
    with running(create_app(Settings())) as origin, httpx.Client(base_url=origin, timeout=30, verify=TRUSTED) as http:
        front_end_traffic(http)
        alone = contract(http)
    one, other = (create_app(Settings(state=redis_url)) for _ in range(2))
    with running(one) as first, running(other) as second, httpx.Client(base_url=first, timeout=30) as a:
        front_end_traffic(a)
        shared = httpx.get(f"{second}/__mock__/contract", timeout=30).json()
    assert shared == alone


def test_shop_mock_contract_refuses_what_is_not_a_contract(tmp_path: Path) -> None:
    """Another server on the port: its JSON is not written, and the error is one line."""
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    async def elsewhere(request: object) -> JSONResponse:
        return JSONResponse([1, 2, 3])

    with running(Starlette(routes=[Route("/__mock__/contract", elsewhere)])) as origin:
        command = [sys.executable, "-m", "mock_server", "contract", "--url", origin, "--out", "x.json"]
        done = subprocess.run(command, capture_output=True, text=True, timeout=60, cwd=tmp_path, check=False)
    assert done.returncode == 2
    assert (
        done.stderr
        == f"shop-mock: error: {origin} answered GET /__mock__/contract with something else than a consumer contract\n"
    )
    assert not (tmp_path / "x.json").exists()


class Held:
    """A server that holds each request until `released`, then answers 503; `asked` is set once one came."""

    def __init__(self) -> None:
        self.asked, self.released = threading.Event(), threading.Event()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        self.asked.set()
        while not self.released.is_set():
            await asyncio.sleep(0.05)
        await send({"type": "http.response.start", "status": 503, "headers": [(b"content-length", b"0")]})
        await send({"type": "http.response.body", "body": b""})


@pytest.mark.parametrize("sent", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_ends_shop_mock_contract_in_one_line_with_the_earlier_file_kept(
    sent: signal.Signals, tmp_path: Path
) -> None:
    """Before, Ctrl-C was a traceback and SIGTERM a kill without a line."""
    out = tmp_path / "web.json"
    out.write_text("the earlier contract\n")
    held = Held()
    with running(held) as origin:
        command = [sys.executable, "-m", "mock_server", "contract", "--url", origin, "--out", str(out)]
        child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            assert held.asked.wait(60), "the contract was never asked for"
            child.send_signal(sent)
            stdout, stderr = child.communicate(timeout=60)
        finally:
            held.released.set()
            if child.poll() is None:
                child.kill()
                child.communicate()
    assert (child.returncode, stdout, stderr) == (2, "", f"shop-mock: error: interrupted by {sent.name}\n")
    assert [path.name for path in tmp_path.iterdir()] == ["web.json"] and out.read_text() == "the earlier contract\n"


def endless(piece: bytes, pause: float) -> Any:
    """A server answering 200 with `piece` again and again, `pause` seconds apart, without end."""

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
        while True:
            await send({"type": "http.response.body", "body": piece, "more_body": True})
            await asyncio.sleep(pause)

    return app


@pytest.mark.parametrize(
    ("server", "bounds", "reason"),
    [
        (endless(b" " * 65536, 0), {"MAX_CONTRACT_BYTES": 1_000_000}, "its answer is larger than 1000000 bytes"),
        (endless(b" ", 0.05), {"CONTRACT_DEADLINE_S": 1.0}, "its answer took longer than 1 s"),
    ],
)
def test_shop_mock_contract_reads_a_server_within_its_bounds(
    server: Any,
    bounds: dict[str, float],
    reason: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`--url` may name any server: one sending without end was read until memory ran out, one sending a
    byte at a time for ever held the command. The bounds, made small here, are what the test is about."""
    for name, value in bounds.items():
        monkeypatch.setattr(cli, name, value)
    with running(server) as origin:
        assert cli.main(["contract", "--url", origin, "--out", str(tmp_path / "c.json")]) == 2
    assert capsys.readouterr().err == f"shop-mock: error: cannot read the contract from {origin}: {reason}\n"
    assert not (tmp_path / "c.json").exists()


def test_shop_mock_contract_refuses_json_nested_too_deeply(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """It was a RecursionError's traceback."""

    async def deep(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": b"[" * 100_000 + b"]" * 100_000})

    with running(deep) as origin:
        assert cli.main(["contract", "--url", origin, "--out", str(tmp_path / "c.json")]) == 2
    assert capsys.readouterr().err == f"shop-mock: error: cannot read the contract from {origin}: nested too deeply\n"
