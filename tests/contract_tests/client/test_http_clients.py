"""The suite's two HTTP clients against small real servers: every way a server may answer, both clients.

httpx (`httpx_client`/`send_httpx`, the domain checks) and requests (`bounded_session`, Schemathesis)
meet the same servers (tests/support/wire.py): answers that close the connection, HTTP/1.0, chunked
and compressed bodies, interim 1xx answers, connections dropped while idle, TLS with a private CA, an
HTTP proxy; and the deadline and the size limit still hold on each way.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gzip
import socket
import ssl
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import requests

from contract_tests import cli
from contract_tests.client.bounded import ACCEPT_ENCODING, Limits, ResponseTooLarge, Trust
from contract_tests.client.bounded_httpx import httpx_client, send_httpx
from contract_tests.client.bounded_requests import bounded_session
from contract_tests.client.surface import Surface
from contract_tests.client.target import limits_of
from contract_tests.client.together import Together
from contract_tests.identities import Identities
from contract_tests.judge.engine import Plan, load_schema
from contract_tests.judge.known import Known
from contract_tests.options import DEFAULT_MAX_RESPONSE_SIZE
from contract_tests.run import arguments
from contract_tests.spec import Spec
from tests.support.suite import a_run, shop_contract
from tests.support.wire import Authority, Wire, authority, read_request, reset, serving

MIB = 1024 * 1024
BODY = bytes(range(256)) * 800  # 200 KiB: many socket reads
ENVIRONMENT = (
    *("SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"),
    *("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"),
)
FAILED = (httpx.HTTPError, requests.RequestException)
TIMED_OUT = (httpx.TimeoutException, requests.Timeout)


@pytest.fixture(autouse=True)
def bare_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """No CA bundle or proxy from the machine: each test sets what it is about."""
    for name in ENVIRONMENT:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)


@dataclass(frozen=True)
class Reply:
    status: int
    body: bytes


class Client:
    """One of the suite's clients, sending GETs as the suite sends its requests."""

    def __init__(self, kind: str, limits: Limits) -> None:
        self.limits = limits
        self._httpx = httpx_client(limits) if kind == "httpx" else None
        self._session = bounded_session(requests.Session(), limits) if kind == "requests" else None
        if self._session is not None:
            self._session.headers.clear()  # as Schemathesis sends: without requests' default headers

    def get(self, url: str) -> Reply:
        if self._httpx is not None:
            response = send_httpx(self._httpx, self._httpx.build_request("GET", url), self.limits)
            return Reply(response.status_code, response.content)
        assert self._session is not None
        answer = self._session.get(url)
        return Reply(answer.status_code, answer.content)

    def close(self) -> None:
        if self._httpx is not None:
            self._httpx.close()
        if self._session is not None:
            self._session.close()


Clients = Callable[..., Client]


@pytest.fixture(params=["httpx", "requests"])
def clients(request: pytest.FixtureRequest) -> Iterator[Clients]:
    """Makes the client under test (after the test set its environment): `clients(deadline=..., ...)`."""
    made: list[Client] = []

    def make(**limits: Any) -> Client:
        made.append(Client(request.param, dataclasses.replace(Limits(3, DEFAULT_MAX_RESPONSE_SIZE), **limits)))
        return made[-1]

    yield make
    for client in made:
        client.close()


def _case(origin: str, flags: list[str]) -> Any:
    """A Schemathesis case of `list_product_lines` at `origin`, sent as a run with `flags` sends it."""
    base_url = origin + "/shop/api/v1"
    options = arguments.options_from(["--base-url", base_url, "--api-key", "k", *flags], {})
    surface = Surface("backend", base_url, operations=("list_product_lines",), headers={}, accepted={})
    schema = load_schema(
        a_run(Spec.load(), options, surface), surface, Plan(frozenset({"list_product_lines"})), Known(Identities())
    )
    return schema.find_operation_by_id("list_product_lines").Case()


def _in_pieces(conn: socket.socket, data: bytes, pieces: int = 8, pause: float = 0.02) -> None:
    size = -(-len(data) // pieces)
    for start in range(0, len(data), size):
        time.sleep(pause)
        conn.sendall(data[start : start + size])


def _head(status: str = "200 OK", version: str = "HTTP/1.1", **headers: object) -> bytes:
    lines = [f"{version} {status}", *(f"{name.replace('_', '-')}: {value}" for name, value in headers.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def _keeping_alive(answer: Callable[[bytes], bytes]) -> Callable[[socket.socket, Wire], None]:
    """Answers every request of a connection with `answer(request head)`, until the client closes."""

    def serve(conn: socket.socket, wire: Wire) -> None:
        while (head := read_request(conn, wire)) is not None:
            conn.sendall(answer(head))

    return serve


def closing(conn: socket.socket, wire: Wire) -> None:
    """As gunicorn's sync worker answers: `Connection: close` on every answer; the body after the headers."""
    read_request(conn, wire)
    conn.sendall(_head(Connection="close", Content_Length=len(BODY)))
    _in_pieces(conn, BODY)


def test_a_closing_answer_is_read_whole_when_its_body_comes_after_its_headers(clients: Clients) -> None:
    client = clients()
    with serving(closing) as wire:
        assert client.get(wire.origin + "/") == Reply(200, BODY)
        assert client.get(wire.origin + "/") == Reply(200, BODY)
    assert wire.connections == 2


def test_schemathesis_reads_a_closing_answer_whole() -> None:
    """The case of issue 17, through Schemathesis' own transport: every request read, none broken."""
    with serving(closing) as wire:
        case = _case(wire.origin, [])
        assert [case.call().content for _ in range(3)] == [BODY] * 3
    assert wire.connections == 3


def test_an_http_1_0_answer_is_read_to_the_end_of_the_connection(clients: Clients) -> None:
    def old(conn: socket.socket, wire: Wire) -> None:
        read_request(conn, wire)
        conn.sendall(_head(version="HTTP/1.0", Content_Type="application/octet-stream"))
        _in_pieces(conn, BODY)

    client = clients()
    with serving(old) as wire:
        assert client.get(wire.origin + "/") == Reply(200, BODY)
        assert client.get(wire.origin + "/") == Reply(200, BODY)


@pytest.mark.parametrize("form", [{"name": []}, "", b"", "a=1"])
def test_a_form_body_of_known_length_is_sent_with_its_length_never_chunked(form: Any) -> None:
    """requests sends a form that encodes to nothing chunked; an HTTP/1.0 server answers that with 411."""
    session = bounded_session(requests.Session(), Limits(3, DEFAULT_MAX_RESPONSE_SIZE))
    with serving(_keeping_alive(lambda head: _head(Content_Length=0))) as wire:
        form_type = {"Content-Type": "application/x-www-form-urlencoded"}
        assert session.put(wire.origin + "/", data=form, headers=form_type).status_code == 200
    head = wire.requests[0].decode().lower()
    assert "transfer-encoding" not in head
    assert f"content-length: {len(requests.Request('PUT', 'http://x/', data=form).prepare().body or '')}" in head
    session.close()


def test_a_chunked_answer_is_read_whole_and_its_connection_kept(clients: Clients) -> None:
    def chunked(conn: socket.socket, wire: Wire) -> None:
        while read_request(conn, wire) is not None:
            conn.sendall(_head(Transfer_Encoding="chunked"))
            chunks = b"".join(b"%x\r\n%s\r\n" % (len(piece), piece) for piece in (BODY[:1000], BODY[1000:]))
            _in_pieces(conn, chunks + b"0\r\n\r\n")

    client = clients()
    with serving(chunked) as wire:
        assert client.get(wire.origin + "/") == Reply(200, BODY)
        assert client.get(wire.origin + "/") == Reply(200, BODY)
    assert wire.connections == 1


COMPRESS = {"gzip": gzip.compress, "deflate": zlib.compress}


@pytest.mark.parametrize("encoding", COMPRESS)
def test_a_compressed_answer_is_inflated_and_both_clients_ask_for_the_same_encodings(
    clients: Clients, encoding: str
) -> None:
    packed = COMPRESS[encoding](BODY)
    answer = _head(Content_Encoding=encoding, Content_Length=len(packed)) + packed
    client = clients()
    with serving(_keeping_alive(lambda head: answer)) as wire:
        assert client.get(wire.origin + "/") == Reply(200, BODY)
    assert f"accept-encoding: {ACCEPT_ENCODING}".encode() in wire.requests[0].lower()


def test_interim_1xx_answers_are_skipped(clients: Clients) -> None:
    interim = _head("103 Early Hints", Link="</style.css>; rel=preload") + _head("100 Continue")
    client = clients()
    with serving(_keeping_alive(lambda head: interim + _head(Content_Length=len(head)) + head)) as wire:
        first, second = client.get(wire.origin + "/first"), client.get(wire.origin + "/second")
    assert (first.status, second.status) == (200, 200)
    assert first.body.startswith(b"GET /first ") and second.body.startswith(b"GET /second ")
    assert wire.connections == 1


def idle_closing(conn: socket.socket, wire: Wire) -> None:
    """Answers a connection's first request and keeps it open, then drops it with the next request
    unanswered: a keep-alive connection closed while idle, just as the client sent on it."""
    head = read_request(conn, wire)
    conn.sendall(_head(Content_Length=len(BODY)) + BODY)
    assert head is not None
    read_request(conn, wire)


def test_a_request_on_a_kept_connection_the_server_dropped_is_sent_once_more(clients: Clients) -> None:
    client = clients()
    with serving(idle_closing) as wire:
        assert client.get(wire.origin + "/one") == Reply(200, BODY)
        assert client.get(wire.origin + "/two") == Reply(200, BODY)
    assert wire.request_lines() == ["GET /one HTTP/1.1", "GET /two HTTP/1.1", "GET /two HTTP/1.1"]
    assert wire.connections == 2


def test_a_request_is_sent_again_past_every_kept_connection_the_server_dropped_at_once(clients: Clients) -> None:
    """A server closes its idle connections on one timer, so those that went idle together expire together:
    the request sent again may meet the next one dropped too. It is sent until it meets a fresh connection
    (each try takes one pooled connection out, so the tries end)."""
    both_open = threading.Barrier(2, timeout=5)
    opened = iter(range(2))
    answering = _keeping_alive(lambda head: _head(Content_Length=len(BODY)) + BODY)

    def first_two_dropped_together(conn: socket.socket, wire: Wire) -> None:
        if next(opened, None) is None:
            return answering(conn, wire)
        read_request(conn, wire)
        both_open.wait()  # the client holds two connections at once: its pool keeps both
        conn.sendall(_head(Content_Length=len(BODY)) + BODY)
        read_request(conn, wire)
        return None

    client = clients()
    with serving(first_two_dropped_together) as wire:
        with ThreadPoolExecutor(2) as pool:
            assert list(pool.map(client.get, [wire.origin + "/one", wire.origin + "/two"])) == [Reply(200, BODY)] * 2
        assert client.get(wire.origin + "/three") == Reply(200, BODY)
    assert set(wire.request_lines()[2:]) == {"GET /three HTTP/1.1"}  # requests' pool reconnects at once: 2, httpx's: 3
    assert wire.connections == 3


def test_a_fresh_connection_reset_is_an_error_not_retried(clients: Clients) -> None:
    def resetting(conn: socket.socket, wire: Wire) -> None:
        read_request(conn, wire)
        reset(conn)

    client = clients()
    with serving(resetting) as wire, pytest.raises(FAILED):
        client.get(wire.origin + "/")
    assert (wire.connections, len(wire.requests)) == (1, 1)


def test_an_answer_cut_on_a_kept_connection_is_an_error_not_retried(clients: Clients) -> None:
    def cutting(conn: socket.socket, wire: Wire) -> None:
        read_request(conn, wire)
        conn.sendall(_head(Content_Length=2) + b"ok")
        read_request(conn, wire)
        conn.sendall(b"HTTP/1.1 200 O")  # the answer began: the server saw the request
        time.sleep(0.2)
        reset(conn)

    client = clients()
    with serving(cutting) as wire:
        assert client.get(wire.origin + "/") == Reply(200, b"ok")
        with pytest.raises(FAILED):
            client.get(wire.origin + "/")
    assert (wire.connections, len(wire.requests)) == (1, 2)


# TLS ------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ca(tmp_path_factory: pytest.TempPathFactory) -> Authority:
    return authority(tmp_path_factory.mktemp("ca"))


def _tls_ok(ca: Authority) -> contextlib.AbstractContextManager[Wire]:
    return serving(_keeping_alive(lambda head: _head(Content_Length=2) + b"ok"), tls=ca.server)


def test_a_private_ca_given_as_ca_bundle_is_trusted(clients: Clients, ca: Authority) -> None:
    client = clients(trust=Trust(ca_bundle=ca.ca_file))
    with _tls_ok(ca) as wire:
        assert client.get(wire.origin + "/") == Reply(200, b"ok")


def test_connections_opened_at_once_from_many_threads_leave_the_shared_tls_context_as_made(
    ca: Authority, monkeypatch: pytest.MonkeyPatch
) -> None:
    """httpcore sets the ALPN protocols of a context before each connection. CPython frees the old list then,
    which another thread's new connection may be copying (python/cpython#141012): its handshake went out
    garbled, and nginx refused it ("bad extension"). A burst's threads share their trust's one context, and
    it is never set again once made. It still offers HTTP/1.1."""
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(ca.ca_file.parent / "server.pem", ca.ca_file.parent / "server.key")
    server.set_alpn_protocols(["h2", "http/1.1"])
    limits = Limits(3, DEFAULT_MAX_RESPONSE_SIZE, trust=Trust(ca_bundle=ca.ca_file))
    shared = type(limits.trust.ssl_context())
    setter, set_again = shared._set_alpn_protocols, []

    def setting(context: ssl.SSLContext, protocols: bytes) -> None:
        set_again.append(protocols)
        setter(context, protocols)

    monkeypatch.setattr(shared, "_set_alpn_protocols", setting)
    chosen: list[str | None] = []

    def answer(conn: socket.socket, wire: Wire) -> None:
        assert isinstance(conn, ssl.SSLSocket)
        chosen.append(conn.selected_alpn_protocol())
        _keeping_alive(lambda head: _head(Content_Length=2) + b"ok")(conn, wire)

    with serving(answer, tls=server) as wire, Together(limits, 8) as together:
        burst = together.send([httpx.Request("GET", f"{wire.origin}/") for _ in range(8)])
    assert [each.response.content for each in burst.timed] == [b"ok"] * 8
    assert (wire.connections, chosen) == (8, ["http/1.1"] * 8)
    assert set_again == []


@pytest.mark.parametrize("variable", ["SSL_CERT_FILE", "REQUESTS_CA_BUNDLE"])
def test_a_private_ca_named_by_the_environment_is_trusted(
    clients: Clients, ca: Authority, variable: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(variable, str(ca.ca_file))
    client = clients()
    with _tls_ok(ca) as wire:
        assert client.get(wire.origin + "/") == Reply(200, b"ok")


def test_a_certificate_from_an_unknown_ca_is_refused(clients: Clients, ca: Authority) -> None:
    client = clients()
    with _tls_ok(ca) as wire, pytest.raises(FAILED, match="CERTIFICATE_VERIFY_FAILED"):
        client.get(wire.origin + "/")


def test_insecure_accepts_a_certificate_from_an_unknown_ca(clients: Clients, ca: Authority) -> None:
    client = clients(trust=Trust(insecure=True))
    with _tls_ok(ca) as wire:
        assert client.get(wire.origin + "/") == Reply(200, b"ok")


def test_the_ca_bundle_flag_reaches_both_clients(clients: Clients, ca: Authority, tmp_path: Path) -> None:
    with _tls_ok(ca) as wire:
        options = arguments.options_from(["--base-url", wire.origin, "--ca-bundle", str(ca.ca_file)], {})
        client = clients(trust=limits_of(options).trust)
        assert client.get(wire.origin + "/") == Reply(200, b"ok")


@pytest.mark.parametrize("flag", ["--ca-bundle", "--insecure", None])
def test_the_tls_flags_reach_schemathesis_requests(ca: Authority, flag: str | None) -> None:
    flags = {"--ca-bundle": ["--ca-bundle", str(ca.ca_file)], "--insecure": ["--insecure"], None: []}[flag]
    with _tls_ok(ca) as wire:
        case = _case(wire.origin, flags)
        if flag is None:
            with pytest.raises(requests.exceptions.SSLError, match="CERTIFICATE_VERIFY_FAILED"):
                case.call()
        else:
            assert case.call().content == b"ok"


@pytest.mark.parametrize(("name", "said"), [("nope.pem", "no such file"), (".", "not a regular file")])
def test_a_ca_bundle_that_is_not_a_file_is_a_usage_error_saying_which(tmp_path: Path, name: str, said: str) -> None:
    """A directory or a device (/dev/zero) was called "no such file"."""
    with pytest.raises(cli.UsageError, match=rf"--ca-bundle .*: {said}$"):
        arguments.options_from(["--base-url", "https://127.0.0.1:1", "--ca-bundle", str(tmp_path / name)], {})


def test_a_ca_bundle_that_holds_no_certificate_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "empty.pem").write_text("not a certificate\n")
    with pytest.raises(cli.UsageError, match=r"--ca-bundle .*empty\.pem: not a readable PEM file"):
        Trust(ca_bundle=tmp_path / "empty.pem").ssl_context()


def test_a_ca_bundle_variable_naming_no_certificate_is_a_usage_error_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "empty.pem").write_text("")
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(tmp_path / "empty.pem"))
    with pytest.raises(cli.UsageError, match=r"^REQUESTS_CA_BUNDLE .*empty\.pem: not a readable PEM file"):
        Trust().ssl_context()


def test_the_cli_warns_once_with_insecure_and_reaches_a_self_signed_target(ca: Authority) -> None:
    with serving(_keeping_alive(lambda head: _head("404 Not Found", Content_Length=0)), tls=ca.server) as wire:
        args = ["--base-url", wire.origin, "--api-key", "k", "--no-conformance", "--quiet"]
        refused = shop_contract(args, timeout=60)
        insecure = shop_contract([*args, "--insecure"], timeout=60)
    assert refused.code == 2 and "CERTIFICATE_VERIFY_FAILED" in refused.stderr
    assert "warning" not in refused.stderr
    assert insecure.code == 2 and "HTTP 404" in insecure.stderr  # the probe got an answer: not this API
    assert insecure.stderr.splitlines()[0] == cli.INSECURE_WARNING
    assert insecure.stderr.count("warning") == 1


# proxies ------------------------------------------------------------------------------------------------


def _saying(text: bytes) -> Callable[[socket.socket, Wire], None]:
    return _keeping_alive(lambda head: _head(Content_Length=len(text)) + text)


def test_http_proxy_from_the_environment_carries_the_requests(
    clients: Clients, monkeypatch: pytest.MonkeyPatch
) -> None:
    with serving(_saying(b"direct")) as target, serving(_saying(b"proxied")) as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.origin)
        client = clients()
        assert client.get(target.origin + "/x") == Reply(200, b"proxied")
    assert proxy.request_lines() == [f"GET {target.origin}/x HTTP/1.1"]
    assert target.requests == []


def test_no_proxy_bypasses_the_proxy(clients: Clients, monkeypatch: pytest.MonkeyPatch) -> None:
    with serving(_saying(b"direct")) as target, serving(_saying(b"proxied")) as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.origin)
        monkeypatch.setenv("NO_PROXY", "127.0.0.1")
        client = clients()
        assert client.get(target.origin + "/x") == Reply(200, b"direct")
    assert proxy.requests == []


def test_the_environment_is_read_once_per_origin_and_its_proxy_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    """requests reads the proxies from the environment for each request: the bounded session once per origin."""
    reads: list[str] = []
    read = requests.sessions.get_environ_proxies
    monkeypatch.setattr(
        requests.sessions, "get_environ_proxies", lambda url, **kw: reads.append(url) or read(url, **kw)
    )
    with serving(_saying(b"direct")) as target, serving(_saying(b"proxied")) as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.origin)
        session = bounded_session(requests.Session(), Limits(3, DEFAULT_MAX_RESPONSE_SIZE))
        answers = [session.get(target.origin + path).content for path in ("/x", "/y", "/z")]
        session.close()
    assert answers == [b"proxied"] * 3 and target.requests == []
    assert reads == [target.origin + "/x"]


def tunnelling(conn: socket.socket, wire: Wire) -> None:
    """An HTTPS proxy: CONNECT, then the bytes relayed both ways until one side closes."""
    head = read_request(conn, wire)
    assert head is not None and head.startswith(b"CONNECT ")
    host, port = head.split(b" ")[1].decode().rsplit(":", 1)
    with socket.create_connection((host, int(port))) as upstream:
        conn.sendall(_head("200 Connection established"))
        relay = threading.Thread(target=_relay, args=(upstream, conn), daemon=True)
        relay.start()
        _relay(conn, upstream)
        relay.join(timeout=5)


def _relay(source: socket.socket, sink: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while data := source.recv(65536):
            sink.sendall(data)
    with contextlib.suppress(OSError):
        sink.shutdown(socket.SHUT_WR)


def test_https_proxy_from_the_environment_tunnels_to_a_tls_target(
    clients: Clients, ca: Authority, monkeypatch: pytest.MonkeyPatch
) -> None:
    with _tls_ok(ca) as target, serving(tunnelling) as proxy:
        monkeypatch.setenv("HTTPS_PROXY", proxy.origin)
        client = clients(trust=Trust(ca_bundle=ca.ca_file))
        assert client.get(target.origin + "/") == Reply(200, b"ok")
    [line] = proxy.request_lines()  # http.client says HTTP/1.0, httpcore HTTP/1.1
    assert line.startswith(f"CONNECT {target.origin.removeprefix('https://')} HTTP/1.")


# the deadline and the size limit, direct and through a proxy ---------------------------------------------


def trickling_body(conn: socket.socket, wire: Wire) -> None:
    read_request(conn, wire)
    conn.sendall(_head(Content_Length=100))
    for _ in range(100):
        conn.sendall(b" ")
        time.sleep(0.1)


def trickling_headers(conn: socket.socket, wire: Wire) -> None:
    read_request(conn, wire)
    for byte in _head(Content_Length=0) * 10:
        conn.sendall(bytes([byte]))
        time.sleep(0.1)


def big_body(conn: socket.socket, wire: Wire) -> None:
    read_request(conn, wire)
    conn.sendall(_head(Content_Length=4 * MIB))
    conn.sendall(b"x" * 4 * MIB)


BOMB = gzip.compress(bytes(64 * MIB))  # 64 KiB that inflate to 64 MiB


def gzip_bomb(conn: socket.socket, wire: Wire) -> None:
    read_request(conn, wire)
    conn.sendall(_head(Content_Encoding="gzip", Content_Length=len(BOMB)) + BOMB)


def _through(route: str, wire: Wire, monkeypatch: pytest.MonkeyPatch) -> str:
    """The URL to ask for `wire`'s answer: `wire` itself, or `wire` as the environment's proxy."""
    if route == "direct":
        return wire.origin + "/"
    monkeypatch.setenv("HTTP_PROXY", wire.origin)
    return "http://192.0.2.1/"  # TEST-NET: reachable only through the proxy


@pytest.mark.parametrize("route", ["direct", "proxy"])
@pytest.mark.parametrize("answer", [trickling_body, trickling_headers], ids=["body", "headers"])
def test_a_trickling_answer_ends_at_the_deadline(
    clients: Clients, route: str, answer: Callable[[socket.socket, Wire], None], monkeypatch: pytest.MonkeyPatch
) -> None:
    with serving(answer) as wire:
        url = _through(route, wire, monkeypatch)
        client = clients(deadline=0.5, max_response_size=MIB)
        started = time.monotonic()
        with pytest.raises(TIMED_OUT):
            client.get(url)
        assert time.monotonic() - started < 5  # the answer trickles for 10 s or more


@pytest.mark.parametrize("route", ["direct", "proxy"])
@pytest.mark.parametrize("answer", [big_body, gzip_bomb], ids=["big", "gzip-bomb"])
def test_an_answer_past_the_size_limit_stops_there(
    clients: Clients, route: str, answer: Callable[[socket.socket, Wire], None], monkeypatch: pytest.MonkeyPatch
) -> None:
    with serving(answer) as wire:
        url = _through(route, wire, monkeypatch)
        client = clients(max_response_size=MIB)
        with pytest.raises(ResponseTooLarge):
            client.get(url)
