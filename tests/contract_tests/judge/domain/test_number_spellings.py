"""`identifier_variants` on an integer identifier (judge/domain/number_spellings.py, decision
`integer-identifiers`): every spelling of a customer's number, and one digit more and less, are tried on
the four item operations of the correct mock with no report; a service whose reads find a spelling its
writes do not is reported; and what the check derives from a made number is masked between runs."""

from __future__ import annotations

from contract_tests.identities import Identities
from contract_tests.judge.canonical import FRESH, Canonical
from contract_tests.judge.domain.number_spellings import spellings
from contract_tests.options import Options
from contract_tests.outcome.findings import Ledger
from contract_tests.run import runner
from mock_server.app import create_app
from mock_server.settings import DEFAULT_API_KEY, Settings
from tests.support.clause_variants import CLAUSE_VARIANTS
from tests.support.live import running

CUSTOMER_OPERATIONS = {"get_customer", "update_customer", "patch_customer", "delete_customer"}


def judged(app: object) -> Ledger:
    with running(app) as origin:
        options = Options(
            base_url=f"{origin}/shop/api/v1",
            api_key=DEFAULT_API_KEY,
            conformance=False,
            seed=3,
            include=("create_customer", "get_customer"),
            checks=("identifier_variants",),
        )
        return runner.run(options, lambda line: None)


def test_the_correct_mock_answers_every_spelling_alike_and_each_operation_is_judged() -> None:
    ledger = judged(create_app(Settings()))
    assert not ledger.violations, [violation.rule for violation in ledger.violations]
    judged_ops = {key.operation for key in ledger.passes if key.check == "identifier_variants"}
    assert judged_ops >= CUSTOMER_OPERATIONS, judged_ops
    assert not ledger.not_exercised, ledger.not_exercised


def test_reads_that_find_a_spelling_the_writes_do_not_are_reported() -> None:
    variant = next(v for v in CLAUSE_VARIANTS if v.name == "number_spelling_found_by_reads_only")
    rules = [violation.rule for violation in judged(variant.build()).violations]
    assert any("spelled with a leading zero" in rule and "not found, as its read was" in rule for rule in rules), rules


def test_the_spellings_are_other_texts_of_the_same_number() -> None:
    texts = [text for _, text in spellings(1427789015)]
    assert len(set(texts)) == len(texts) and "1427789015" not in texts
    assert [int(text) for text in texts if text.strip().lstrip("+").replace("_", "").isdigit()] == [1427789015] * 6


def test_what_is_derived_from_a_made_number_is_masked_between_runs() -> None:
    identities = Identities()
    number = identities.integer({"type": "integer"})
    derived = [identities.derived(text) for _, text in spellings(number)] + [identities.derived(number * 10)]
    canonical = Canonical(identities)
    assert all(FRESH in canonical({"path": {"customernumber": value}}) for value in derived)
    assert FRESH not in canonical({"path": {"customernumber": 103}})
