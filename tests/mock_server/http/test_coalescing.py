"""`CoalescingTransport`: a response head goes out with what follows it, every byte in order, none
lost, and a head with nothing after it still leaves at the end of the loop's turn.

The transport below it is a real one: one end of a socket pair, read from the other.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Awaitable, Callable

from mock_server.http.coalescing import CoalescingTransport

HEAD = b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\n"


class Peer:
    """The other end of the socket pair: what has arrived, read without blocking."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.sock.setblocking(False)

    def arrived(self) -> bytes:
        data = b""
        while True:
            try:
                chunk = self.sock.recv(65536)
            except BlockingIOError:
                return data
            if not chunk:
                return data
            data += chunk


Check = Callable[[CoalescingTransport, Peer], Awaitable[None]]


def run(check: Check) -> None:
    """`check` on a CoalescingTransport over a real socket transport, in a fresh event loop."""

    async def main() -> None:
        ours, theirs = socket.socketpair()
        loop = asyncio.get_running_loop()
        transport, _ = await loop.connect_accepted_socket(asyncio.Protocol, ours)
        try:
            await check(CoalescingTransport(transport, loop), Peer(theirs))  # type: ignore[arg-type]
        finally:
            transport.abort()
            theirs.close()

    asyncio.run(main())


async def turn() -> None:
    """Let the loop finish its turn (and the socket carry what was written)."""
    for _ in range(3):
        await asyncio.sleep(0)
    await asyncio.sleep(0.01)


def test_a_head_is_held_until_its_body_and_both_leave_in_order() -> None:
    async def check(coalescing: CoalescingTransport, peer: Peer) -> None:
        coalescing.write(HEAD)
        assert coalescing.held == HEAD and peer.arrived() == b""
        coalescing.write(b"hello")
        assert coalescing.held == b""
        await turn()
        assert peer.arrived() == HEAD + b"hello"

    run(check)


def test_a_head_with_nothing_after_it_leaves_at_the_end_of_the_turn() -> None:
    """A streamed response's head, or a HEAD answer's, does not wait for a write that may never come."""

    async def check(coalescing: CoalescingTransport, peer: Peer) -> None:
        coalescing.write(HEAD)
        await turn()
        assert peer.arrived() == HEAD

    run(check)


def test_other_writes_pass_at_once_and_everything_keeps_its_order() -> None:
    async def check(coalescing: CoalescingTransport, peer: Peer) -> None:
        coalescing.write(b"chunk 1")
        assert coalescing.held == b""
        coalescing.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        coalescing.write(HEAD)  # the final head follows the interim one: both go out, in order
        coalescing.write(b"hello")
        await turn()
        assert peer.arrived() == b"chunk 1" + b"HTTP/1.1 100 Continue\r\n\r\n" + HEAD + b"hello"

    run(check)


def test_a_close_sends_the_held_head_first() -> None:
    async def check(coalescing: CoalescingTransport, peer: Peer) -> None:
        coalescing.write(HEAD)
        coalescing.close()
        await turn()
        assert peer.arrived() == HEAD and coalescing.is_closing()

    run(check)


def test_an_abort_drops_the_held_head_as_it_drops_what_is_buffered() -> None:
    async def check(coalescing: CoalescingTransport, peer: Peer) -> None:
        coalescing.write(HEAD)
        coalescing.abort()
        await turn()
        assert peer.arrived() == b"" and coalescing.held == b""

    run(check)
