"""A small HTTP/1.0 server forwarding to an upstream: one request per connection, bodies end at EOF.

The way old or minimal servers answer: an `HTTP/1.0` status line, no `Content-Length`, no keep-alive;
the client knows the body has ended when the connection closes. The request goes upstream as it
came (its Host too, so absolute URLs name this server). With `--one-at-a-time` it is a proxy serialising
requests: one thread accepts a connection, reads its request, forwards it and answers it before it accepts
the next, so requests are taken in their order of arrival, as one worker takes them. Run as
`python -m tests.support.zoo.http10 --port N --upstream http://127.0.0.1:M` (SIGTERM ends it).
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import sys
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

from tests.support.ports import BACKLOG, free_port
from tests.support.processes import unmeasured
from tests.support.zoo.process import serving

# Hop-by-hop headers, and those an HTTP/1.0 answer ending at EOF must not carry.
DROPPED = {"connection", "keep-alive", "transfer-encoding", "content-length", "proxy-connection", "upgrade"}


class Forward(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"  # BaseHTTPRequestHandler then closes after each response
    timeout = 30  # A client that never finishes its request cannot hold one thread (or the only one) forever.
    upstream: tuple[str, int] = ("127.0.0.1", 0)

    def forward(self) -> None:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            self.send_error(411, "HTTP/1.0: a request body needs a Content-Length")
            return
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        headers = {name: value for name, value in self.headers.items() if name.lower() not in DROPPED}
        if body:
            headers["Content-Length"] = str(len(body))
        connection = http.client.HTTPConnection(*self.upstream, timeout=30)
        try:
            connection.request(self.command, self.path, body=body, headers=headers)
            response = connection.getresponse()
            payload = response.read()
        finally:
            connection.close()
        self.send_response_only(response.status, response.reason)
        for name, value in response.getheaders():
            if name.lower() not in DROPPED:
                self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)

    do_GET = do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = forward

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: the tests read the suite's report, not an access log."""


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.support.zoo.http10", description=__doc__)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--upstream", required=True, help="http://HOST:PORT")
    parser.add_argument("--one-at-a-time", action="store_true", help="serialise requests, as one worker does")
    args = parser.parse_args(argv)
    upstream = urlsplit(args.upstream)
    Forward.upstream = (upstream.hostname or "127.0.0.1", upstream.port or 80)
    # One thread takes connections in the kernel's order of arrival; threads racing for a lock would not.
    server_class = HTTPServer if args.one_at_a_time else ThreadingHTTPServer
    server_class.request_queue_size = BACKLOG
    server = server_class(("127.0.0.1", args.port), Forward)
    server.serve_forever()


@contextlib.contextmanager
def http10_in_front_of(upstream: str, directory: Path, *, one_at_a_time: bool = False) -> Iterator[str]:
    """Yield the origin (http://127.0.0.1:PORT) of this server in a child process, forwarding to `upstream`,
    one request at a time if asked."""
    port = free_port()
    command = [sys.executable, "-m", __name__, "--port", str(port), "--upstream", upstream]
    command += ["--one-at-a-time"] if one_at_a_time else []
    origin = f"http://127.0.0.1:{port}"
    with serving(command, directory / "http10.log", f"{origin}/__mock__/health", env=unmeasured()):
        yield origin


if __name__ == "__main__":
    main()
