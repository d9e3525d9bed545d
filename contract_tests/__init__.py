"""Contract suite of the shop service: checks any implementation (a URL) against openapi/openapi.yaml."""

from importlib.metadata import PackageNotFoundError, version


def _installed_version() -> str:
    try:
        return version("shop-contract-suite")
    except PackageNotFoundError:
        return "unknown"


SUITE_VERSION = _installed_version()
