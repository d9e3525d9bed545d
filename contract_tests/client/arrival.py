"""Whether a target answers a request while another is still arriving: what tells a target that can
race from one that takes requests one at a time.

A burst is judged only when all its requests were on the wire before the first answer came
(client/burst.py). That is the client's view, and a target can still take them one at a time. One sync
worker reads a request, answers it, and only then accepts the next connection. A proxy that serialises
requests forwards the next only once the first is answered. Their waiting requests sit in the kernel's
backlog, on the wire, and no race can happen there.

So the probe holds one request half sent: its request line and `Host`, the rest of its header block held
back. A server answers no request before its whole header block came. While that request is held, the same
read goes whole on another connection. A target that serves side by side answers it within its latency.
One that takes requests one at a time cannot: it waits for the held one, and answers the second only once
the first is released and answered.

A proxy before the server reads a request's header block whole before it passes the request on, so the
held request may never reach the server. Two more questions see past it:
- A list read whose body is held (`Content-Length` promised, one byte of two sent, no type). A server
  answers it without the body, which a read never needs. A proxy that reads whole requests first (nginx does by
  default) answers nothing until the body came. Behind such a proxy no request reaches the server before it
  came whole, so whether two met there cannot be seen: the target is `buffered`.
- Otherwise a create whose body is held (`{` of `{x`, with the run's credentials) reaches the server,
  which waits for the rest, and the same read goes meanwhile. One worker behind a proxy that passes
  bodies on as they come answers the read only once the create is released. The create is then refused
  as malformed JSON (400), so it never makes an item.

A target that answers side by side is then asked the same while a whole wave of race tries is held
(`WAVE_HELD` requests, their connections opened side by side). One that answers takes a wave at once.
One that does not (two sync workers) takes a wave's requests in their order of arrival, so its tries are
staggered (client/together.py).

Apart from the create, the held requests carry no credentials and are never sent whole before the probe
ends: they read a list. Through a proxy from the environment the probe would hold the proxy's connection,
not the target's, so there it says that it could not tell.
"""

from __future__ import annotations

import contextlib
import socket
import ssl
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from urllib.parse import urlsplit

import httpx

from contract_tests.client.bounded import Limits
from contract_tests.client.bounded_httpx import httpx_client, proxied, send_httpx

HOLD_S = 5.0
"""Seconds the first request is held at most while the second waits for its answer. A target serving side
by side answers within its own latency, far below this; one taking requests one at a time never does."""
WAVE_HELD = 24
"""Requests held at once to ask whether the target takes a whole wave of race tries together: the largest
wave's burst (3 creates a try, 8 tries; judge/domain/racing.py)."""
HELD_BODY = b"Content-Length: 2\r\nConnection: close\r\n\r\n{"
"""The end of a header block promising a body of two bytes, and its first: a server reading the body waits
for the second."""
REPLACED = {b"host", b"content-length", b"content-type", b"transfer-encoding", b"connection", b"expect"}
"""Headers of the held create that the probe writes itself."""
WAVE_WAIT_S = 1.0
"""Seconds the read waits at least while a wave is held: ten times its own latency, never less than this.
Only a target that queues the wave waits it out."""


@dataclass(frozen=True)
class Arrival:
    """What the probe saw. `side_by_side` is None when it could not tell, and `seen` says why."""

    side_by_side: bool | None
    seen: str
    takes_a_wave: bool | None = None
    """Whether the target answered the read while `WAVE_HELD` requests were arriving (None: not asked, or it
    could not tell). One that did not takes a wave's requests in their order of arrival."""
    buffered: bool | None = None
    """Whether something before the server reads whole requests before passing them on, so that whether two
    met on the server cannot be seen (None: not asked, or it could not tell)."""


ONE_AT_A_TIME = "the target takes requests one at a time (one worker, or a proxy serialising requests)"
BUFFERED = (
    "a read whose body had not all come was not answered: something before the server reads whole requests "
    "before passing them on (nginx does by default), so whether two requests met on the server cannot be "
    "seen; to judge the races, point the suite at the server behind it"
)


def probed(read: httpx.Request, write: httpx.Request, limits: Limits) -> Arrival:
    """Whether the target of `read` (a safe request, with its credentials) answers it while the same read,
    without credentials, is still arriving on another connection; whether it reads whole requests before a
    server takes them; whether `write` (a create, with its credentials) held half sent keeps the read from
    an answer; and whether it answers while a wave's worth of reads are arriving."""
    url = str(read.url)
    if proxied(url):
        return Arrival(None, "a proxy from the environment stands before the target")
    try:
        held, held_write = _request_head(url), _write_head(write)
    except ValueError as exc:
        return Arrival(None, f"the probe's request could not be written ({exc})")
    hold = min(HOLD_S, limits.seconds())
    first = _while_held(url, read, limits, [held], hold)
    if isinstance(first, str):
        return Arrival(None, first)
    answered, took = first
    if not answered:
        return _one_at_a_time("a request", "another, sent before it, was still arriving")
    wait = max(WAVE_WAIT_S, 10 * took)
    buffered = _body_awaited(url, held[0], limits, wait)
    if buffered is False:
        written = _while_held(url, read, limits, [held_write], hold)
        if not isinstance(written, str) and not written[0]:
            return _one_at_a_time("a read", "a create, sent before it, was still sending its body", buffered=False)
    seen = BUFFERED if buffered is True else "a request was answered while another was still arriving"
    wave = _while_held(url, read, limits, [held] * WAVE_HELD, wait)
    takes_a_wave = None if isinstance(wave, str) else wave[0]
    return Arrival(True, seen, takes_a_wave, None if isinstance(buffered, str) else buffered)


def _one_at_a_time(what: str, meanwhile: str, buffered: bool | None = None) -> Arrival:
    """The target takes requests one at a time: `what` was not answered while `meanwhile`."""
    seen = f"{what} was not answered in {HOLD_S:.0f} s while {meanwhile}: {ONE_AT_A_TIME}"
    return Arrival(False, seen, buffered=buffered)


def _body_awaited(url: str, head: bytes, limits: Limits, wait: float) -> bool | str:
    """Whether a read of `url` (`head`: its request line and `Host`) whose body has not all come stays
    unanswered for `wait` seconds (something reads whole requests before a server takes them), or why the
    probe cannot tell."""
    try:
        connection = _opened(url, limits)
    except (OSError, ValueError) as exc:
        return f"the probe's connection failed ({type(exc).__name__})"
    try:
        # No Content-Type: a framework's body parser (express.json(), Rails') would wait for a typed body.
        connection.sendall(head + HELD_BODY)
        connection.settimeout(wait)
        try:
            answer = connection.recv(1)
        except TimeoutError:
            return True
        with contextlib.suppress(OSError):
            connection.sendall(b"}")
    except OSError as exc:
        return f"the probe's request failed ({type(exc).__name__})"
    finally:
        connection.close()
    return False if answer else "the target closed a read whose body had not all come"


def _while_held(
    url: str, read: httpx.Request, limits: Limits, held_requests: list[tuple[bytes, bytes]], wait: float
) -> tuple[bool, float] | str:
    """Whether `read` was answered within `wait` seconds while `held_requests` to its target were held half
    sent (what is sent, what releases it), and in how many seconds; or why the probe cannot tell. The held
    requests are then released."""
    unheld = replace(limits, held=False)  # The read goes past the pacer's limit, as a burst does.
    held: list[socket.socket] = []
    answered = threading.Event()
    took: list[float] = []
    failed: list[BaseException] = []

    def second() -> None:
        started = time.monotonic()
        try:
            with httpx_client(unheld) as client:
                send_httpx(client, read, unheld)
            took.append(time.monotonic() - started)
            answered.set()
        except Exception as exc:  # Any failure of the read: the probe cannot tell.
            failed.append(exc)

    try:
        opened = _opened_side_by_side(url, limits, len(held_requests))
        held.extend(each for each in opened if isinstance(each, socket.socket))
        refused = [each for each in opened if not isinstance(each, socket.socket)]
        if refused:
            return f"the probe's connection failed ({type(refused[0]).__name__})"
        for connection, (head, _) in zip(held, held_requests, strict=True):
            try:
                connection.sendall(head)
            except OSError as exc:
                return f"the probe's held request could not be sent ({type(exc).__name__})"
        thread = threading.Thread(target=second, name="shop-contract-arrival", daemon=True)
        thread.start()
        in_time = answered.wait(wait)
        # Released: a target taking one at a time answers them, then the read. One that dropped a held
        # request meanwhile leaves the read to be judged as it came.
        for connection, (_, rest) in zip(held, held_requests, strict=True):
            with contextlib.suppress(OSError):
                connection.sendall(rest)
    finally:
        for connection in held:
            connection.close()
    thread.join(limits.seconds())
    if failed:
        return f"the probe's request failed ({type(failed[0]).__name__})"
    return in_time, took[0] if took else wait


def _opened_side_by_side(url: str, limits: Limits, count: int) -> list[socket.socket | OSError | ValueError]:
    """`count` connections to the target of `url`, opened side by side (far away, one after the other would
    cost round trips each), or what refused each."""

    def one() -> socket.socket | OSError | ValueError:
        try:
            return _opened(url, limits)
        except (OSError, ValueError) as exc:
            return exc

    with ThreadPoolExecutor(max_workers=count, thread_name_prefix="shop-contract-arrival") as pool:
        return list(pool.map(lambda _: one(), range(count)))


def _opened(url: str, limits: Limits) -> socket.socket:
    """A connection to the target of `url`, through TLS for https with the run's trust."""
    parts = urlsplit(url)
    assert parts.hostname is not None  # _request_head refused a URL without one
    port = parts.port or (443 if parts.scheme == "https" else 80)
    raw = socket.create_connection((parts.hostname, port), timeout=limits.seconds())
    if parts.scheme != "https":
        return raw
    try:
        return limits.trust.ssl_context().wrap_socket(raw, server_hostname=parts.hostname)
    except ssl.SSLError:
        raw.close()
        raise


def _write_head(write: httpx.Request) -> tuple[bytes, bytes]:
    """`write` with its own headers (its credentials) and the body `{x`, cut after `{`: what is sent and held,
    and what releases it. A server reading it waits for the rest, then refuses it as malformed JSON."""
    head, _ = _request_head(str(write.url), write.method)
    kept = b"".join(name + b": " + value + b"\r\n" for name, value in write.headers.raw if name.lower() not in REPLACED)
    return head + kept + b"Content-Type: application/json\r\n" + HELD_BODY, b"x"


def _request_head(url: str, method: str = "GET") -> tuple[bytes, bytes]:
    """A request of `url`'s header block, cut after its `Host`: what is sent and held, and what releases it."""
    parts = urlsplit(url)
    if parts.hostname is None:
        raise ValueError(f"no host in {url}")
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    host += f":{parts.port}" if parts.port else ""
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    head = f"{method} {target} HTTP/1.1\r\nHost: {host}\r\n".encode("ascii")
    return head, b"Accept: application/json\r\nConnection: close\r\n\r\n"
