"""The suite against a real Django REST Framework backend (tests/backends/drf, test support).

The correct backend gives no violation; each variant with one defect DRF services commonly ship is
reported by its named check. The default run keeps one fast-profile run against the correct backend;
the three-seed runs (both profiles on a list over 300 items, every variant) carry the `drf` marker and
run in `tox -e drf`. The tokens come from a running mock's realm, which the backend verifies against.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("django")
pytest.importorskip("rest_framework")
drf = pytest.importorskip("tests.backends.drf.server", reason="the DRF test backend is not on this branch")

from mock_server.app import create_app  # noqa: E402
from mock_server.settings import Settings  # noqa: E402
from tests.contract.support import TOKEN_PATH, Outcome, shop_contract  # noqa: E402
from tests.live import free_port, running  # noqa: E402

SEEDS = (101, 202, 303)
OVER_THREE_PAGES = 350  # more than 3 x the clamped page size (100) in one list
CAUGHT_BY = {
    "unprotected_fk": "referential_rules",
    "default_lookup": "identifier_addressable",
    "writable_pk": "identifier_immutable",
    "patch_resets": "patch_locality",
    "wrong_previous": "pagination_walk",
}


@pytest.fixture(scope="module")
def realm() -> Iterator[str]:
    """A mock whose realm issues the tokens (`/realms/shop`)."""
    port = free_port()  # the realm's issuer names its own port
    with running(create_app(Settings(port=port)), port=port) as origin:
        yield origin


def contract(origin: str, realm: str, tmp_path: Path, *args: str) -> Outcome:
    surfaces = ["--base-url", f"{origin}/shop/api/v1", "--gateway-url", f"{origin}/customers/v1"]
    realm_args = ["--token-url", realm + TOKEN_PATH, "--client-id", "shop-dev", "--client-secret", "shop-dev-secret"]
    return shop_contract([*surfaces, "--api-key", "dev-api-key", *realm_args, "--quiet", *args], tmp_path)


def test_correct_drf_backend_passes_the_fast_profile(realm: str, tmp_path: Path) -> None:
    with drf.serve("correct", realm_url=f"{realm}/realms/shop") as origin:
        outcome = contract(origin, realm, tmp_path, "--profile", "fast", "--seed", str(SEEDS[0]))
    assert outcome.code == 0, outcome.stdout[-6000:] + outcome.stderr


@pytest.mark.drf
@pytest.mark.parametrize("profile", ["fast", "default"])
def test_correct_drf_backend_passes_with_three_seeds(realm: str, tmp_path: Path, profile: str) -> None:
    """Three runs on one database whose product list is over three clamped pages long (the seed data plus
    OVER_THREE_PAGES products): reruns must not collide with what earlier runs created."""
    with drf.serve("correct", realm_url=f"{realm}/realms/shop", extra_products=OVER_THREE_PAGES) as origin:
        for seed in SEEDS:
            outcome = contract(origin, realm, tmp_path / str(seed), "--profile", profile, "--seed", str(seed))
            assert outcome.code == 0, f"seed {seed}: " + outcome.stdout[-6000:] + outcome.stderr


@pytest.mark.drf
@pytest.mark.parametrize("variant", sorted(CAUGHT_BY))
def test_each_drf_variant_is_caught_by_its_check_with_three_seeds(realm: str, tmp_path: Path, variant: str) -> None:
    """Each defect is a domain check's to find, so `--no-conformance`: caught without Schemathesis' help
    (a DELETE answering 500 included)."""
    with drf.serve(variant, realm_url=f"{realm}/realms/shop") as origin:
        for seed in SEEDS:
            args = ("--profile", "fast", "--no-conformance", "--seed", str(seed))
            outcome = contract(origin, realm, tmp_path / str(seed), *args)
            caught = {violation["check"] for violation in outcome.findings.get("violations", [])}
            assert outcome.code == 1 and CAUGHT_BY[variant] in caught, f"seed {seed}: caught by {sorted(caught)}"
