"""Issue 28's checks have teeth: each broken variant of `read_back_variants` is caught by its check in
every run (two seeds), and the values the checks write cover the whole range the spec admits."""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import replace
from decimal import Decimal
from types import SimpleNamespace
from typing import Any

import pytest

from contract_tests.judge import checks
from contract_tests.judge.domain import ordering
from contract_tests.judge.domain.ranges import HIGH, LOW, SHORTEST, decimal_end, end_value, one_past, wide_text
from contract_tests.options import Options
from contract_tests.outcome.findings import Ledger
from contract_tests.run import runner
from contract_tests.spec import Spec
from mock_server.settings import DEFAULT_API_KEY
from tests.support.live import running
from tests.support.read_back_variants import READ_BACK_VARIANTS
from tests.support.variants import CASE_INSENSITIVE_IDENTIFIERS, Variant

SPEC = Spec.load()
SEEDS = (7, 8)


def judged(variant: Variant, seed: int) -> Ledger:
    """One run of `variant`'s check on a fresh `variant`, in process (the CLI's runner, as
    `shop-contract --no-conformance --checks CHECK` runs it)."""
    with running(variant.build()) as origin:
        options = Options(
            base_url=f"{origin}/shop/api/v1",
            api_key=DEFAULT_API_KEY,
            conformance=False,
            seed=seed,
            include=variant.include,
            checks=(variant.check,),
        )
        return runner.run(options, lambda line: None)


@pytest.mark.parametrize("variant", READ_BACK_VARIANTS, ids=str)
def test_broken_variant_is_caught_by_its_check_in_every_run(variant: Variant) -> None:
    """One fresh variant per seed."""
    for seed in SEEDS:
        caught = {violation.check for violation in judged(variant, seed).violations}
        assert caught == {variant.check}, f"{variant.name}, seed {seed}: caught by {sorted(caught)}"


def test_identifiers_ignoring_case_consistently_get_no_report() -> None:
    """The decision `identifiers-exact` admits a service whose identifiers ignore letter case in every
    lookup and create (MySQL's default collation), at three seeds; both collections are judged."""
    for seed in (*SEEDS, 9):
        ledger = judged(CASE_INSENSITIVE_IDENTIFIERS, seed)
        assert not ledger.violations, [violation.rule for violation in ledger.violations]
        judged_ops = {key.operation for key in ledger.passes if key.check == "identifier_variants"}
        assert {"create_product_line", "create_product"} <= judged_ops, judged_ops


def test_lists_ordered_as_a_case_insensitive_collation_gets_no_report() -> None:
    """The decision `list-order` admits a list ordered by its key's case-folded form where the service ignores
    letter case, as MySQL's default collation orders it, at three seeds; the string-keyed lists and their
    sub-lists are judged, with items list_order made in an order the two orders sort differently."""
    lists = ("list_product_lines", "list_products", "get_product_line_products")
    variant = replace(CASE_INSENSITIVE_IDENTIFIERS, check="list_order", include=lists)
    for seed in (*SEEDS, 9):
        ledger = judged(variant, seed)
        assert not ledger.violations, [violation.rule for violation in ledger.violations]
        judged_ops = {key.operation for key in ledger.passes if key.check == "list_order"}
        assert set(lists) <= judged_ops, judged_ops


def page(*keys: str) -> tuple[Any, list[Any]]:
    return None, [{"productline": key} for key in keys]


def test_a_walk_is_in_one_order_throughout() -> None:
    """Code-point order or case-folded order, each for the whole walk: a walk mixing them, or in neither
    (descending), is reported with the pair that shows it."""
    assert ordering.misordered([page("B", "a"), page("b")], "productline") is None
    assert ordering.misordered([page("a", "b"), page("B")], "productline") is None
    assert ordering.misordered([page("a", "B"), page("b")], "productline") is None  # a tie in a fixed order
    mixed = ordering.misordered([page("B", "a"), page("b", "C")], "productline")
    assert mixed is not None and "mixes two orders" in mixed and "'b' comes before 'C'" in mixed
    backwards = ordering.misordered([page("b", "a")], "productline")
    shown = "productline 'b' comes before 'a' (page 1 at page_size=2)"
    assert backwards == f"{shown}: ascending in neither order (code-point, case-folded)"


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


def test_item_identity_admits_the_stored_spelling_in_another_case_only() -> None:
    """A service ignoring case answers `Classic Cars` at `classic%20cars` (`identifiers-exact`); an item
    with another identifier is still the violation."""

    def answered(productline: str) -> SimpleNamespace:
        body = json.dumps({"productline": productline}).encode()
        return SimpleNamespace(status_code=200, content=body, headers={"content-type": ["application/json"]})

    case = SimpleNamespace(path_parameters={"productline": "classic%20cars"})
    assert checks.item_identity(None, answered("Classic Cars"), case) is None
    with pytest.raises(AssertionError, match="answers productline='Vintage Cars'"):
        checks.item_identity(None, answered("Vintage Cars"), case)
