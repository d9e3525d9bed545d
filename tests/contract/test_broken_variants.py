"""The suite has teeth: each broken variant of the mock makes it exit 1 and name the check that caught it."""

from __future__ import annotations

from pathlib import Path

import pytest

from contract_tests.check_names import DOMAIN_CHECKS
from tests.contract.race_variants import RACE_VARIANTS
from tests.contract.read_back_variants import READ_BACK_VARIANTS
from tests.contract.support import credentials, shop_contract
from tests.contract.variants import VARIANTS, Variant
from tests.live import running


@pytest.mark.parametrize("variant", VARIANTS, ids=str)
def test_broken_variant_is_caught_by_its_check(variant: Variant, tmp_path: Path) -> None:
    with running(variant.build()) as origin:
        args = ["--base-url", f"{origin}/shop/api/v1", *credentials(origin), "--seed", "7", "--quiet"]
        args += ["--gateway-url", f"{origin}/customers/v1"] if variant.gateway else []
        args += [arg for op in variant.include for arg in ("--include", op)]
        args += ["--no-conformance"] if variant.phases == "domain" else ["--no-domain", "--profile", "fast"]
        outcome = shop_contract(args, tmp_path)
    assert outcome.code == 1, outcome.stdout[-3000:] + outcome.stderr
    caught = {violation["check"] for violation in outcome.findings["violations"]}
    assert variant.check in caught, f"{variant.name}: caught by {sorted(caught)}, not {variant.check}"
    assert f"[{variant.check}]" in outcome.stdout


def test_variants_cover_every_domain_check() -> None:
    assert set(DOMAIN_CHECKS) <= {variant.check for variant in (*VARIANTS, *READ_BACK_VARIANTS, *RACE_VARIANTS)}
