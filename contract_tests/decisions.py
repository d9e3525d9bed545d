"""The spec's own decisions (`info.x-decisions`): what the interface documents leave open and the spec
decides. Each is judged by checks of the suite or admitted on purpose.

An entry is `{id, summary, clauses}`, and maybe also `{admitted: "X or Y", reason}`. An entry that
admits several answers may also list them for the checks to load (`admits: [null, ""]`). So no check
restates a decision.

Each clause is one rule of the decision, `{id, text}`. It names the checks that judge it
(`judged-by: [check, ...]`), or says why none does (`not-judged: why`). The decision's checks are its
clauses' checks. An entry without clauses comes from an older revision, and names them itself in
`judged-by`.

tests/contract_tests/test_decisions.py keeps these in step: the list, the prose of
`info.description`, the check registry, the broken variants naming each judged clause, and the tables
of docs/decisions.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from contract_tests.spec import Spec

EMPTY_FORM_VALUE = "empty-form-value"
"""The decision on an empty form value for a nullable field. `patch_locality` reads its `admits`."""
PAGE_PAST_THE_END = "page-past-the-end"
"""The decision on a page past the last. `pagination_walk` reads its `admits`, the statuses it may answer."""


@dataclass(frozen=True)
class Clause:
    id: str
    """`decision-id/clause-id`, unique in the spec."""
    text: str
    judged_by: tuple[str, ...]
    not_judged: str | None
    """Why no check judges it, when none does."""


@dataclass(frozen=True)
class Decision:
    id: str
    summary: str
    judged_by: tuple[str, ...]
    """The checks of the suite that judge it, named as in its registry (`check_names.ALL_CHECKS`)."""
    admitted: str | None
    """What the suite accepts besides the spec's own answer, such as "null or empty string". `reason` says
    why."""
    reason: str | None
    admits: tuple[Any, ...]
    """The admitted values themselves, where a check needs them."""
    clauses: tuple[Clause, ...]


def decisions(spec: Spec) -> list[Decision]:
    """The spec's decisions, in its order. A revision without the list has none.

    It raises KeyError when an entry or a clause lacks its `id`, `summary` or `text`."""
    found = []
    for entry in spec.raw.get("info", {}).get("x-decisions", []):
        clauses = tuple(clause_of(str(entry["id"]), part) for part in entry.get("clauses", ()))
        checks = [check for clause in clauses for check in clause.judged_by] or entry.get("judged-by", ())
        found.append(
            Decision(
                id=str(entry["id"]),
                summary=str(entry["summary"]),
                judged_by=tuple(dict.fromkeys(checks)),
                admitted=entry.get("admitted"),
                reason=entry.get("reason"),
                admits=tuple(entry.get("admits", ())),
                clauses=clauses,
            )
        )
    return found


def clause_of(decision: str, part: dict[str, Any]) -> Clause:
    not_judged = part.get("not-judged")
    return Clause(
        id=f"{decision}/{part['id']}",
        text=str(part["text"]),
        judged_by=tuple(part.get("judged-by", ())),
        not_judged=None if not_judged is None else str(not_judged),
    )


def admits(spec: Spec, identifier: str) -> tuple[Any, ...]:
    """The values the decision `identifier` admits. There are none when the spec does not make it."""
    return next((found.admits for found in decisions(spec) if found.id == identifier), ())
