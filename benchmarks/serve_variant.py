"""Serve the correct mock (`mock`) or one broken variant of it (tests/support/variants.py) on a port.

python -m benchmarks.serve_variant NAME PORT
"""

from __future__ import annotations

import sys

import uvicorn

from mock_server.app import create_app
from mock_server.settings import Settings
from tests.support.variants import VARIANTS


def main(name: str, port: int) -> None:
    variants = {variant.name: variant for variant in VARIANTS}
    if name != "mock" and name not in variants:
        sys.exit(f"serve_variant: unknown variant {name!r}; known: mock, {', '.join(sorted(variants))}")
    app = create_app(Settings()) if name == "mock" else variants[name].build()
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
