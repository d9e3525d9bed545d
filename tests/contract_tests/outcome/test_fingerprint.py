"""A violation's fingerprint names the defect whatever the input; its id names one finding."""

from __future__ import annotations

from dataclasses import replace

from contract_tests.outcome.findings import Ledger, Violation
from contract_tests.outcome.fingerprint import fingerprint, rule_shape, violation_id


def violation(rule: str, curl: str = "curl -X GET 'http://127.0.0.1:8000/shop/api/v1/products/'") -> Violation:
    return Violation("round_trip", "backend", "get_product", rule, curl, "HTTP 200")


def test_the_same_rule_with_other_generated_values_has_one_fingerprint() -> None:
    first = violation("`productName` reads back 'Ã\\'x' instead of 'Ã©' (created with 3 fields, page 2)")
    second = violation('`productName` reads back "zz" instead of "日本" (created with 14 fields, page 9)')
    assert fingerprint(first) == fingerprint(second)


def test_an_apostrophe_in_a_word_quotes_nothing() -> None:
    said = "the gateway's representation differs from the backend's: 'PARIS' for 'Paris'"
    assert rule_shape(said) == "the gateway's representation differs from the backend's: '…' for '…'"


def test_the_targets_origin_is_left_out() -> None:
    local = rule_shape("`previous` of page 2 leads to page 2: http://127.0.0.1:40123/shop/api/v1/lines/?page=2")
    staging = rule_shape("`previous` of page 2 leads to page 2: https://staging.example.com/shop/api/v1/lines/?page=2")
    assert local == staging == "`previous` of page N leads to page N: <origin>/shop/api/vN/lines/?page=N"


def test_another_field_or_another_check_is_another_fingerprint() -> None:
    assert fingerprint(violation("`productName` reads back 'a'")) != fingerprint(violation("`buyPrice` reads back 'a'"))
    other_check = Violation("write_echo", "backend", "get_product", "`productName` reads back 'a'", "curl", "")
    assert fingerprint(other_check) != fingerprint(violation("`productName` reads back 'a'"))


def test_a_rule_shape_is_its_first_line_bounded_and_one_line() -> None:
    shape = rule_shape("Server error\n\nTraceback: " + "x" * 5000)
    assert shape == "Server error"
    assert len(rule_shape("y" * 5000)) == 200
    assert "\n" not in rule_shape("a\tb\r\nc")


def test_ids_are_eight_hex_characters_and_tell_two_findings_of_one_defect_apart() -> None:
    first = violation("`productName` reads back 'a'", "curl http://x/products/1")
    second = violation("`productName` reads back 'b'", "curl http://x/products/2")
    assert fingerprint(first) == fingerprint(second)
    assert violation_id(first) != violation_id(second)
    assert violation_id(first) == violation_id(violation("`productName` reads back 'a'", "curl http://x/products/1"))
    assert len(violation_id(first)) == 8 and int(violation_id(first), 16) >= 0


def test_a_ledger_holds_one_violation_per_id_whatever_a_flaky_target_answered() -> None:
    ledger = Ledger()
    first = violation("`productName` reads back 'a' instead of 'b'")
    ledger.violated(first)
    ledger.violated(replace(first, response="HTTP 200 (another body)"))
    ledger.violated(replace(first, setup=("curl -X POST 'http://127.0.0.1:8000/shop/api/v1/products/'",)))
    ledger.violated(replace(first, rule="`productName` reads back 'c' instead of 'b'"))
    ids = [violation_id(v) for v in ledger.violations]
    assert len(ids) == 3 == len(set(ids))
    assert ledger.violations[0].response == "HTTP 200"
