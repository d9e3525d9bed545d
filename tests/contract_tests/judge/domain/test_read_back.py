"""Issue 28's checks have teeth: each broken variant of `read_back_variants` is caught by its check in
every run (two seeds), and the values the checks write cover the whole range the spec admits."""

from __future__ import annotations

import re
import unicodedata
from decimal import Decimal

import pytest

from contract_tests.judge.domain.ranges import HIGH, LOW, SHORTEST, decimal_end, end_value, one_past, wide_text
from contract_tests.options import Options
from contract_tests.run import runner
from contract_tests.spec import Spec
from mock_server.settings import DEFAULT_API_KEY
from tests.support.live import running
from tests.support.read_back_variants import READ_BACK_VARIANTS
from tests.support.variants import Variant

SPEC = Spec.load()
SEEDS = (7, 8)


@pytest.mark.parametrize("variant", READ_BACK_VARIANTS, ids=str)
def test_broken_variant_is_caught_by_its_check_in_every_run(variant: Variant) -> None:
    """In process (the CLI's runner, as `shop-contract --no-conformance --checks CHECK` runs it), one
    fresh variant per seed."""
    for seed in SEEDS:
        with running(variant.build()) as origin:
            options = Options(
                base_url=f"{origin}/shop/api/v1",
                api_key=DEFAULT_API_KEY,
                conformance=False,
                seed=seed,
                include=variant.include,
                checks=(variant.check,),
            )
            ledger = runner.run(options, lambda line: None)
        caught = {violation.check for violation in ledger.violations}
        assert caught == {variant.check}, f"{variant.name}, seed {seed}: caught by {sorted(caught)}"


def test_every_property_has_variants_of_two_mechanisms_at_least() -> None:
    by_check: dict[str, set[str]] = {}
    for variant in READ_BACK_VARIANTS:
        by_check.setdefault(variant.check, set()).add(variant.name)
    assert {name: len(names) >= 2 for name, names in by_check.items()} == dict.fromkeys(by_check, True)
    assert len(by_check) == 5


def test_wide_text_has_the_length_asked_and_reaches_beyond_latin1_and_the_bmp() -> None:
    text = wide_text(50)
    assert len(text) == 50 and not text[0].isspace() and not text[-1].isspace()
    assert not unicodedata.combining(text[-1])
    assert any(ord(char) > 0xFFFF for char in text) and any(0xFF < ord(char) <= 0xFFFF for char in text)
    assert any(unicodedata.combining(char) for char in wide_text(200))
    assert len(one_past({"maxLength": 15}) or "") == 16 and one_past({}) is None


def test_every_request_field_gets_both_ends_of_its_range_from_its_schema() -> None:
    schema = SPEC.operations["create_customer"].request_schema
    assert schema is not None
    for name, prop in schema["properties"].items():
        high, low = end_value(prop, HIGH, "kept"), end_value(prop, LOW, "kept")
        if prop.get("format") == "decimal":
            assert re.fullmatch(prop["pattern"], str(high)) and Decimal(str(high)) > 0
            assert low is None if prop.get("nullable") else Decimal(str(low)) < 0
        elif prop.get("type") == "integer":
            assert high == prop["maximum"] and low == (None if prop.get("nullable") else prop["minimum"]), name
        else:
            assert len(high) == prop.get("maxLength", len(high)), name
            assert low is None if prop.get("nullable") else low == SHORTEST


def test_the_decimal_ends_are_the_patterns_widest() -> None:
    money = SPEC.raw["components"]["schemas"]["Money"]
    assert decimal_end(money, HIGH) == "99999999.99" and decimal_end(money, LOW) == "-99999999.99"
