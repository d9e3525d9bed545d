"""Every decision the spec writes down is judged by a check of the suite or admitted on purpose, and the
table of the documentation's decisions page (docs/decisions.md) is the spec's list (`info.x-decisions`),
row for row."""

from __future__ import annotations

from pathlib import Path

import pytest

from contract_tests.check_names import ALL_CHECKS
from contract_tests.decisions import Decision, decisions
from contract_tests.spec import Spec

PAGE = Path(__file__).resolve().parents[2] / "docs" / "decisions.md"


@pytest.fixture(scope="module")
def spec() -> Spec:
    return Spec.load(None)


def judged_cell(decision: Decision) -> str:
    """The page's "judged by" cell of `decision`."""
    parts = [", ".join(f"`{check}`" for check in decision.judged_by)] if decision.judged_by else []
    if decision.admitted:
        parts.append(f"admitted: {decision.admitted}, because {decision.reason}")
    return "; ".join(parts)


def page_rows() -> dict[str, str]:
    """The page table's "judged by" cell by decision id, in the table's order."""
    rows = [line for line in PAGE.read_text(encoding="utf-8").splitlines() if line.startswith("| `")]
    cells = [[cell.strip() for cell in row.strip().strip("|").split(" | ")] for row in rows]
    return {row[0].strip("`"): row[-1] for row in cells}


def test_the_spec_lists_its_decisions_with_unique_ids(spec: Spec) -> None:
    ids = [decision.id for decision in decisions(spec)]
    assert len(ids) >= 20 and len(ids) == len(set(ids)), ids


def test_every_decision_is_judged_or_admitted_with_a_reason(spec: Spec) -> None:
    for decision in decisions(spec):
        assert decision.judged_by or decision.admitted, f"{decision.id}: neither judged nor admitted"
        assert bool(decision.admitted) == bool(decision.reason), f"{decision.id}: an admission needs its reason"


def test_every_judge_is_a_check_of_the_suite(spec: Spec) -> None:
    unknown = {(d.id, check) for d in decisions(spec) for check in d.judged_by if check not in ALL_CHECKS}
    assert not unknown, unknown


def test_every_decision_is_in_the_prose(spec: Spec) -> None:
    description = spec.raw["info"]["description"]
    missing = [d.id for d in decisions(spec) if f"`{d.id}`" not in description]
    assert not missing, f"decisions not named in info.description: {missing}"


def test_the_decisions_page_table_is_the_spec_list(spec: Spec) -> None:
    expected = {decision.id: judged_cell(decision) for decision in decisions(spec)}
    rows = page_rows()
    assert list(rows) == list(expected), "the rows of docs/decisions.md are not the spec's decisions in its order"
    wrong = {name: (rows[name], cell) for name, cell in expected.items() if rows[name] != cell}
    assert not wrong, f"docs/decisions.md 'judged by' cells differ from the spec (page, spec): {wrong}"


def test_the_empty_form_value_is_admitted_as_null_or_empty_string(spec: Spec) -> None:
    (decision,) = [d for d in decisions(spec) if d.id == "empty-form-value"]
    assert decision.admitted == "null or empty string" and decision.admits == (None, "")
