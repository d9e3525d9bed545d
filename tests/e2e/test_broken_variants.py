"""The suite has teeth: each broken variant of the mock makes it exit 1 and name the check that caught it.

The variants of tests/support/variants.py that the default run does not keep are run once, in
tests/contract_tests/test_sharding.py (`tox -e sharding`): its unsharded run of a variant is the run this
test would make, seed for seed, and asserts the same. Here: the clause variants, and the variants the
default run keeps.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from contract_tests.check_names import DOMAIN_CHECKS
from tests.support.clause_variants import CLAUSE_VARIANTS
from tests.support.live import running
from tests.support.race_variants import RACE_VARIANTS
from tests.support.read_back_variants import READ_BACK_VARIANTS
from tests.support.suite import ROOT, shop_contract
from tests.support.variants import VARIANTS, Variant

CAUGHT_ALONE = (*VARIANTS, *CLAUSE_VARIANTS)
"""The variants each caught by a run of their own (the read-back and race variants run in their checks' tests)."""
IN_THE_DEFAULT_RUN = frozenset(
    {
        "capital_media_type_is_500",
        "cut_json_body_completed",
        "duplicate_create_accepted",
        "empty_first_page_refused",
        "gateway_reroutes_customer",
        "known_sales_rep_refused",
        "links_drop_page_size",
        "money_without_a_digit_read_as_zero",
        "page_size_above_maximum_refused",
        "previous_of_page_two_wrong",
        "put_answer_not_what_was_stored",
        "refused_delete_removes_payments",
        "relative_next_link",
        "rename_copies_the_item",
        "rename_refused_with_400",
        "repeated_form_field_joined",
        "unauthorized_without_challenge",
        "unknown_field_answered_back",
        "word_as_customer_number_is_500",
    }
)
"""The variants whose runs reach branches of their checks that no other test of the default run reaches (a
violation's own wording, mostly), each a second of CPU or two: they stay in the default run, so that its
branch coverage alone holds the floor (pyproject.toml) and CI measures it without measuring `tox -e e2e`."""


SHARDED = frozenset(variant.name for variant in VARIANTS) - IN_THE_DEFAULT_RUN
"""The variants caught by the unsharded run of tests/contract_tests/test_sharding.py, and not here."""


def by_environment(variant: Variant) -> Any:
    """`variant` as a parameter, marked for `tox -e e2e` unless the default run keeps it."""
    return pytest.param(variant, marks=() if variant.name in IN_THE_DEFAULT_RUN else pytest.mark.e2e, id=str(variant))


# One run of a variant, against the mock under uvicorn: in `tox -e e2e`, as every whole run against a real
# server, unless the default run keeps it.
@pytest.mark.parametrize("variant", [by_environment(v) for v in CAUGHT_ALONE if v.name not in SHARDED])
def test_broken_variant_is_caught_by_its_check(variant: Variant, tmp_path: Path) -> None:
    with running(variant.build()) as origin:
        outcome = shop_contract(variant.run_args(origin), tmp_path)
    caught = {violation["check"] for violation in outcome.findings.get("violations", [])}
    variant.assert_caught(outcome.code, caught, outcome.stdout, outcome.stdout[-3000:] + outcome.stderr)


def test_the_variants_the_default_run_keeps_are_variants() -> None:
    """A misspelt name would leave the default run without its variant, and its coverage short, silently."""
    assert {variant.name for variant in CAUGHT_ALONE} >= IN_THE_DEFAULT_RUN


def test_variants_cover_every_domain_check() -> None:
    caught_by = (*CAUGHT_ALONE, *READ_BACK_VARIANTS, *RACE_VARIANTS)
    assert set(DOMAIN_CHECKS) <= {variant.check for variant in caught_by}


def table_after(text: str, sentence: str) -> list[str]:
    """The body rows of the first table after `sentence` in `text`."""
    rows = []
    for line in text[text.index(sentence) :].splitlines():
        if line.startswith("|"):
            rows.append(line)
        elif rows:
            break
    return rows[2:]


def test_the_detection_rate_in_the_docs_counts_the_variants() -> None:
    """docs/checks.md's counts and tables are the variants these tests prove caught, not typed numbers."""
    text = (ROOT / "docs" / "checks.md").read_text(encoding="utf-8")
    caught, read_back = len(CAUGHT_ALONE), len(READ_BACK_VARIANTS)
    ways = re.search(r"breaks the mock (\d+) ways .*? catches (\d+) of (\d+) \(100 %\)", text, re.DOTALL)
    more = re.search(r"breaks the mock (\d+) more ways", text)
    assert ways and more, "docs/checks.md no longer states its detection rate"
    assert [int(n) for n in ways.groups()] == [caught] * 3, (ways.groups(), caught)
    assert int(more.group(1)) == read_back, (more.group(1), read_back)
    races = re.search(r"breaks it (\d+) more ways, each a race", text)
    assert races and int(races.group(1)) == len(RACE_VARIANTS), "docs/checks.md miscounts the race variants"
    assert len(table_after(text, "## Detection rate")) == caught + len(RACE_VARIANTS)  # their rows say "race"
    assert len(table_after(text, more.group(0))) == read_back
