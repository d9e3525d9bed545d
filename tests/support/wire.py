"""Small real HTTP servers on loopback, written byte by byte, for the suite's HTTP clients to meet.

Each `Wire` is a listening socket served by a thread; every connection goes to an `Answer`, a plain
function that reads requests with `read_request` and writes whatever bytes it likes. The server counts
the connections it accepted and the requests it read, so a test can tell a retry from a single send.
`authority` makes a private CA and a server certificate it signed, with `cryptography`.
"""

from __future__ import annotations

import contextlib
import datetime
import ipaddress
import socket
import ssl
import struct
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


@dataclass
class Wire:
    """What one server saw: connections accepted, and each request's head as read."""

    origin: str = ""
    connections: int = 0
    requests: list[bytes] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def request_lines(self) -> list[str]:
        return [head.split(b"\r\n", 1)[0].decode() for head in self.requests]


Answer = Callable[[socket.socket, Wire], None]


def read_request(conn: socket.socket, wire: Wire) -> bytes | None:
    """One request's head and body (by Content-Length), or None when the client closed first."""
    data = b""
    while b"\r\n\r\n" not in data:
        piece = conn.recv(65536)
        if not piece:
            return None
        data += piece
    head, body = data.split(b"\r\n\r\n", 1)
    length = next(
        (int(line.split(b":", 1)[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")),
        0,
    )
    while len(body) < length:
        body += conn.recv(65536)
    with wire.lock:
        wire.requests.append(head)
    return head


def reset(conn: socket.socket) -> None:
    """Close with a TCP reset instead of a polite FIN (SO_LINGER 0)."""
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    conn.close()


@contextlib.contextmanager
def serving(answer: Answer, tls: ssl.SSLContext | None = None) -> Iterator[Wire]:
    """Serve every connection with `answer` until the block ends; yields the Wire (its origin set)."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    wire = Wire(origin=f"{'https' if tls else 'http'}://127.0.0.1:{port}")
    stop = threading.Event()

    def handle(conn: socket.socket) -> None:
        try:
            if tls is not None:
                conn = tls.wrap_socket(conn, server_side=True)
            with conn:
                conn.settimeout(10)
                answer(conn, wire)
        except OSError:  # the client hung up (a refused certificate, a deadline): its side is under test
            pass

    def accept() -> None:
        listener.settimeout(0.05)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            with wire.lock:
                wire.connections += 1
            threading.Thread(target=handle, args=(conn,), daemon=True).start()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield wire
    finally:
        stop.set()
        thread.join(timeout=5)
        listener.close()


@dataclass(frozen=True)
class Authority:
    """A private CA's certificate (PEM file) and a server context with a loopback certificate it signed."""

    ca_file: Path
    server: ssl.SSLContext


def authority(directory: Path) -> Authority:
    now = datetime.datetime.now(datetime.UTC)
    validity = (now - datetime.timedelta(minutes=5), now + datetime.timedelta(hours=1))

    def certificate(subject: str, key: ec.EllipticCurvePrivateKey) -> x509.CertificateBuilder:
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)])
        return (
            x509.CertificateBuilder()
            .subject_name(name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(validity[0])
            .not_valid_after(validity[1])
        )

    ca_key, server_key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "test CA")])
    ca = (
        certificate("test CA", ca_key)
        .issuer_name(ca_name)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    server = (
        certificate("127.0.0.1", server_key)
        .issuer_name(ca_name)
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
        .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    ca_file, cert_file, key_file = directory / "ca.pem", directory / "server.pem", directory / "server.key"
    ca_file.write_bytes(ca.public_bytes(pem))
    cert_file.write_bytes(server.public_bytes(pem))
    key_file.write_bytes(server_key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_file, key_file)
    return Authority(ca_file, context)
