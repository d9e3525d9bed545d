"""Every decision the spec writes down is judged by a check of the suite or admitted on purpose, clause by
clause; every judged clause is broken by a variant of the mock that its check catches (or is a gap
written down here), and the tables of the documentation's decisions page (docs/decisions.md) are the
spec's list (`info.x-decisions`) and its clauses, row for row."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from contract_tests.check_names import ALL_CHECKS
from contract_tests.decisions import Clause, Decision, decisions
from contract_tests.spec import Spec
from tests.support.clause_variants import CLAUSE_VARIANTS
from tests.support.read_back_variants import READ_BACK_VARIANTS
from tests.support.variants import NULL_TEXT_STORED_AS_NULL, VARIANTS

PAGE = Path(__file__).resolve().parents[2] / "docs" / "decisions.md"
CLAUSES_HEADING = "## Clauses"
ALL_VARIANTS = (*VARIANTS, *READ_BACK_VARIANTS, *CLAUSE_VARIANTS, NULL_TEXT_STORED_AS_NULL)
"""Every broken variant of the mock a test proves caught by its check."""
KNOWN_GAPS: dict[str, str] = {}
"""Judged clauses that no broken variant breaks yet, and why: each a gap of the proof, not of the check."""
PROVED_ELSEWHERE = {
    "long-request-line/shorter-served": "tests/contract_tests/judge/test_long_request_line.py::"
    "test_a_414_to_a_shorter_line_is_an_undocumented_status",
    "empty-form-value/null-or-empty": "tests/contract_tests/judge/domain/test_locality.py::"
    "test_an_empty_form_value_stored_as_something_else_is_caught",
}
"""Judged clauses whose broken service another test serves and proves caught: the gunicorn-like bound on
the request line is a server around the mock at a test's own limit, and the empty form value's defect is
judged on the form PATCHes of a fast profile with conformance, neither of which a `Variant` (one
operation set, one phase, the default limits) expresses."""


@pytest.fixture(scope="module")
def spec() -> Spec:
    return Spec.load(None)


def judged_cell(decision: Decision) -> str:
    """The page's "judged by" cell of `decision`."""
    parts = [", ".join(f"`{check}`" for check in decision.judged_by)] if decision.judged_by else []
    if decision.admitted:
        parts.append(f"admitted: {decision.admitted}, because {decision.reason}")
    return "; ".join(parts)


def clauses(spec: Spec) -> list[Clause]:
    return [clause for decision in decisions(spec) for clause in decision.clauses]


def breaking(clause: Clause) -> list[str]:
    """The names of the broken variants that break `clause`."""
    return [variant.name for variant in ALL_VARIANTS if clause.id in variant.clauses]


def clause_row(clause: Clause) -> str:
    """The row of `clause` in the page's table of clauses."""
    if clause.not_judged is not None:
        checks, shown = f"not judged: {clause.not_judged}", "-"
    else:
        checks = ", ".join(f"`{check}`" for check in clause.judged_by)
        shown = ", ".join(f"`{name}`" for name in breaking(clause))
        if clause.id in PROVED_ELSEWHERE:
            shown = f"`{PROVED_ELSEWHERE[clause.id]}`"
        shown = shown or f"none yet: {KNOWN_GAPS.get(clause.id)}"
    return f"| `{clause.id}` | {clause.text} | {checks} | {shown} |"


def page_tables() -> tuple[list[str], list[str]]:
    """The rows of the page's table of decisions and of its table of clauses."""
    decided, _, clausal = PAGE.read_text(encoding="utf-8").partition(CLAUSES_HEADING)
    return [line for line in decided.splitlines() if line.startswith("| `")], [
        line for line in clausal.splitlines() if line.startswith("| `")
    ]


def page_rows() -> dict[str, str]:
    """The page table's "judged by" cell by decision id, in the table's order."""
    cells = [[cell.strip() for cell in row.strip().strip("|").split(" | ")] for row in page_tables()[0]]
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


def test_every_decision_is_split_into_clauses_each_judged_or_not_with_a_reason(spec: Spec) -> None:
    assert all(decision.clauses for decision in decisions(spec)), "a decision without clauses"
    ids = [clause.id for clause in clauses(spec)]
    assert len(ids) == len(set(ids)), ids
    for clause in clauses(spec):
        assert bool(clause.judged_by) != bool(clause.not_judged), f"{clause.id}: judged, or not judged and why"
        assert set(clause.judged_by) <= set(ALL_CHECKS), clause


def test_every_judged_clause_is_broken_by_a_variant_its_check_catches(spec: Spec) -> None:
    judged = {clause.id: clause for clause in clauses(spec) if clause.judged_by}
    elsewhere = {*KNOWN_GAPS, *PROVED_ELSEWHERE}
    unproved = sorted(name for name, clause in judged.items() if not breaking(clause) and name not in elsewhere)
    assert not unproved, f"judged clauses that no broken variant breaks (add one to tests/contract): {unproved}"
    stale = sorted(name for name in KNOWN_GAPS if name not in judged or breaking(judged[name]))
    assert not stale, f"KNOWN_GAPS lists clauses that are not judged or are broken by a variant now: {stale}"
    for variant in ALL_VARIANTS:
        for name in variant.clauses:
            assert name in judged, f"{variant.name} names {name!r}, which is no judged clause of the spec"
            assert variant.check in judged[name].judged_by, f"{variant.name}: {variant.check} does not judge {name}"


def test_every_clause_proved_elsewhere_is_judged_and_names_a_test_that_exists(spec: Spec) -> None:
    judged = {clause.id: clause for clause in clauses(spec) if clause.judged_by}
    root = PAGE.parents[1]
    for name, node in PROVED_ELSEWHERE.items():
        assert name in judged and not breaking(judged[name]), f"{name}: not judged, or a variant breaks it now"
        path, _, test = node.partition("::")
        source = (root / path).read_text(encoding="utf-8") if (root / path).is_file() else ""
        assert f"def {test}(" in source, f"{name}: {node} names no test"


def test_the_decisions_page_lists_every_clause_with_its_checks_and_variants(spec: Spec) -> None:
    expected = [clause_row(clause) for clause in clauses(spec)]
    rows = page_tables()[1]
    assert rows == expected, "docs/decisions.md's clauses differ from the spec; the table is:\n" + "\n".join(expected)


def stated(node: Any, where: str = "") -> Iterator[tuple[str, str, Any]]:
    """(where, key, value) of every mapping entry in the spec, depth first."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield where, str(key), value
            yield from stated(value, f"{where}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from stated(value, f"{where}/{index}")


def test_every_header_and_status_the_spec_states_is_in_a_clause(spec: Spec) -> None:
    """The rules stated outside the decisions, as far as they can be read without retyping them: every
    header a response or a security scheme documents is named in a clause, and every status an
    operation's, a response's or a parameter's description states is one a clause states."""
    texts = " ".join(clause.text for clause in clauses(spec))
    headers = {key for where, key, _ in stated(spec.raw) if where.endswith("/headers")}
    headers |= {value["name"] for _, key, value in stated(spec.raw) if key.endswith("Auth") and "name" in value}
    unnamed = sorted(header for header in headers if f"`{header}`" not in texts)
    prose = [(where, value) for where, key, value in stated(spec.raw) if key == "description" and "/paths" in where]
    prose += [(where, value) for where, key, value in stated(spec.raw["components"]) if key == "description"]
    statuses = {(where, status) for where, text in prose for status in re.findall(r"\b[1-5]\d\d\b", str(text))}
    unstated = sorted((where, status) for where, status in statuses if not re.search(rf"\b{status}\b", texts))
    assert headers and statuses, "read no header or no status from the spec: the walk is wrong"
    assert not unnamed and not unstated, f"headers no clause names: {unnamed}; statuses no clause states: {unstated}"


def test_the_empty_form_value_is_admitted_as_null_or_empty_string(spec: Spec) -> None:
    (decision,) = [d for d in decisions(spec) if d.id == "empty-form-value"]
    assert decision.admitted == "null or empty string" and decision.admits == (None, "")
