"""nginx (Debian's binary) balancing plain HTTP over several upstreams, round-robin, on a loopback port.

As a platform team runs a shared mock: each request goes to the next upstream, whatever connection
it came on; a failed request is never retried on another upstream (`proxy_next_upstream off`, so a
fault injected by one replica reaches the client as it was), and neither answers nor requests are
buffered (the dashboard's stream goes through as sent; a request reaches a replica as it comes, so the
checks of concurrent writes see whether two met there: contract_tests/client/arrival.py). The admin
API answers only requests naming its own address (`control.admin_guard`: no DNS name rebound to a
replica reaches it), so its location sends `admin_host`, the address the replicas share (one port, each
on its own loopback address: `localhost:PORT` names every one). Where nginx is missing, the tests skip
(fail with SHOP_REQUIRE_NGINX=1), as tests/support/zoo/nginx.py's.
"""

from __future__ import annotations

import contextlib
import os
import pwd
from collections.abc import Iterator
from pathlib import Path

from tests.support.zoo.nginx import PREAMBLE, require_nginx
from tests.support.zoo.process import serving

CONFIG = (
    PREAMBLE
    + """\
    upstream replicas {{
{servers}
    }}
    server {{
        listen 127.0.0.1:{port};
        proxy_http_version 1.1;
        proxy_set_header Connection "";
        proxy_next_upstream off;
        proxy_buffering off;
        proxy_request_buffering off;
        location / {{
            proxy_pass http://replicas;
            proxy_set_header Host $http_host;
        }}
        location /__mock__/ {{
            proxy_pass http://replicas;
            proxy_set_header Host {admin_host};
        }}
    }}
}}
"""
)


@contextlib.contextmanager
def round_robin(port: int, upstreams: list[str], admin_host: str, prefix: Path) -> Iterator[str]:
    """Yield the origin (http://127.0.0.1:`port`) of nginx balancing over `upstreams` (host:port each)."""
    executable = require_nginx()
    user = f"user {pwd.getpwuid(os.getuid()).pw_name};" if os.getuid() == 0 else ""  # see tests/support/zoo/nginx.py
    servers = "\n".join(f"        server {upstream};" for upstream in upstreams)
    config = prefix / "nginx.conf"
    config.write_text(CONFIG.format(user=user, prefix=prefix, port=port, servers=servers, admin_host=admin_host))
    command = [executable, "-p", str(prefix), "-c", str(config), "-e", str(prefix / "error.log")]
    origin = f"http://127.0.0.1:{port}"
    with serving(command, prefix / "nginx.out", f"{origin}/__mock__/health"):
        yield origin
