"""nginx (Debian's binary) as a TLS-terminating reverse proxy in front of an upstream, on a loopback port.

Everything it writes stays in a temporary prefix (`-p`, `-c`, `-e`): configuration, pid file, error
log, temporary files; `daemon off` keeps it the test's child. It tells the upstream what the client
called (Host, X-Forwarded-Host, X-Forwarded-Proto), so absolute URLs come back as https on nginx's
address. Where nginx is not installed the tests that need it are skipped, with the reason; with
SHOP_REQUIRE_NGINX=1 (as in CI) they fail instead.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import ssl
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.ports import free_port
from tests.support.zoo.process import serving
from tests.support.zoo.tls import Certificates

REQUIRE = "SHOP_REQUIRE_NGINX"
SEARCHED = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin"])  # Debian puts nginx in sbin

PREAMBLE = """\
daemon off;
{user}
worker_processes 1;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log warn;
events {{ worker_connections 256; }}
http {{
    access_log off;
    client_body_temp_path {prefix}/client_body;
    proxy_temp_path {prefix}/proxy;
    fastcgi_temp_path {prefix}/fastcgi;
    uwsgi_temp_path {prefix}/uwsgi;
    scgi_temp_path {prefix}/scgi;
"""
"""The start of every nginx configuration of the tests: a private prefix for each temporary path; each
configuration goes on inside `http {`."""
CONFIG = (
    PREAMBLE
    + """\
    client_max_body_size 2m;
    server {{
        listen 127.0.0.1:{port} ssl;
        ssl_certificate {certificate};
        ssl_certificate_key {key};
        location / {{
            proxy_pass {upstream};
            proxy_request_buffering {request_buffering};
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $http_host;
            proxy_set_header X-Forwarded-Host $http_host;
            proxy_set_header X-Forwarded-Proto $scheme;
        }}
    }}
}}
"""
)


def binary() -> str | None:
    return shutil.which("nginx", path=SEARCHED)


def require_nginx() -> str:
    """nginx's path; a skip (a failure with SHOP_REQUIRE_NGINX=1) where it is not installed."""
    found = binary()
    if found is None:
        reason = "nginx is not installed (apt-get install nginx-light)"
        if os.environ.get(REQUIRE) == "1":
            pytest.fail(f"{REQUIRE}=1 but {reason}")
        pytest.skip(f"{reason}; set {REQUIRE}=1 to make this a failure")
    return found


@contextlib.contextmanager
def nginx_in_front_of(
    upstream: str, certificates: Certificates, prefix: Path, *, request_buffering: bool = True
) -> Iterator[str]:
    """Yield the origin (https://127.0.0.1:PORT) of nginx proxying to `upstream`, its files in `prefix`.
    nginx reads each request whole before it passes it on, as it does by default, unless `request_buffering`
    is False: then it passes a body on as it comes."""
    executable = require_nginx()
    port = free_port()
    # As root, nginx's workers would switch to "nobody", who cannot write to this private prefix.
    user = f"user {pwd.getpwuid(os.getuid()).pw_name};" if os.getuid() == 0 else ""
    config = prefix / "nginx.conf"
    config.write_text(
        CONFIG.format(
            user=user,
            prefix=prefix,
            port=port,
            certificate=certificates.certificate,
            key=certificates.key,
            upstream=upstream,
            request_buffering="on" if request_buffering else "off",
        )
    )
    command = [executable, "-p", str(prefix), "-c", str(config), "-e", str(prefix / "error.log")]
    origin = f"https://127.0.0.1:{port}"
    trust = ssl.create_default_context(cafile=certificates.ca)
    with serving(command, prefix / "nginx.out", f"{origin}/__mock__/health", verify=trust):
        yield origin
