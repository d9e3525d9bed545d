"""Contract suite of the shop service. It checks any implementation, given by its URL, against openapi/openapi.yaml."""

from importlib.metadata import PackageNotFoundError, version


def _installed_version() -> str:
    try:
        return version("shop-contract-suite")
    except PackageNotFoundError:
        return "unknown"


SUITE_VERSION = _installed_version()
