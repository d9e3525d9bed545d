"""The suite's two HTTP clients against small real servers: every way a server may answer, both clients.

httpx (`httpx_client`/`send_httpx`, the domain checks) and requests (`bounded_session`, Schemathesis)
meet the same servers (tests/contract/wire.py): answers that close the connection, HTTP/1.0, chunked
and compressed bodies, interim 1xx answers, connections dropped while idle, TLS with a private CA, an
HTTP proxy; and the deadline and the size limit still hold on each way.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
import requests

from contract_tests.bounded import Limits, bounded_session, httpx_client, send_httpx
from tests.contract.wire import Wire, read_request, serving

KIB = 1024
BODY = bytes(range(256)) * 800  # 200 KiB: many socket reads


@dataclass(frozen=True)
class Reply:
    status: int
    body: bytes


class Client:
    """One of the suite's clients, sending GETs: the same calls the suite makes."""

    def __init__(self, kind: str, limits: Limits) -> None:
        self.kind, self.limits = kind, limits
        self._httpx = httpx_client(limits) if kind == "httpx" else None
        self._session = bounded_session(requests.Session(), limits) if kind == "requests" else None

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


@pytest.fixture(params=["httpx", "requests"])
def client(request: pytest.FixtureRequest) -> Iterator[Client]:
    made = Client(request.param, Limits(deadline=3))
    yield made
    made.close()


def _in_pieces(conn: socket.socket, data: bytes, pieces: int = 8, pause: float = 0.02) -> None:
    size = -(-len(data) // pieces)
    for start in range(0, len(data), size):
        time.sleep(pause)
        conn.sendall(data[start : start + size])


def closing(conn: socket.socket, wire: Wire) -> None:
    """Like gunicorn's sync worker: `Connection: close` on every answer; the body after the headers."""
    read_request(conn, wire)
    conn.sendall(b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: %d\r\n\r\n" % len(BODY))
    _in_pieces(conn, BODY)


def test_a_closing_answer_is_read_whole_when_its_body_comes_after_its_headers(client: Client) -> None:
    with serving(closing) as wire:
        assert client.get(wire.origin + "/") == Reply(200, BODY)
        assert client.get(wire.origin + "/") == Reply(200, BODY)
    assert wire.connections == 2
