"""The spec's own decisions (`info.x-decisions`): what the interface documents leave open and the spec
decides, each judged by checks of the suite or admitted on purpose.

An entry is `{id, summary, judged-by: [check, ...]}` and/or `{admitted: "X or Y", reason}`; an entry
that admits several answers may also list them for the checks to load (`admits: [null, ""]`), so no
check restates a decision. tests/contract_tests/test_decisions.py keeps the list, the prose of `info.description`,
the check registry and the table of docs/decisions.md in step.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from contract_tests.spec import Spec

EMPTY_FORM_VALUE = "empty-form-value"
"""The decision on an empty form value for a nullable field (its `admits`, read by `patch_locality`)."""


@dataclass(frozen=True)
class Decision:
    id: str
    summary: str
    judged_by: tuple[str, ...]
    """Checks of the suite (names as in its registry, `check_names.ALL_CHECKS`) that judge it."""
    admitted: str | None
    """What the suite accepts besides the spec's own answer ("null or empty string"), with `reason`."""
    reason: str | None
    admits: tuple[Any, ...]
    """The admitted values themselves, where a check needs them."""


def decisions(spec: Spec) -> list[Decision]:
    """The spec's decisions, in its order (none for a revision without the list); KeyError when an entry
    lacks `id` or `summary`."""
    return [
        Decision(
            id=str(entry["id"]),
            summary=str(entry["summary"]),
            judged_by=tuple(entry.get("judged-by", ())),
            admitted=entry.get("admitted"),
            reason=entry.get("reason"),
            admits=tuple(entry.get("admits", ())),
        )
        for entry in spec.raw.get("info", {}).get("x-decisions", [])
    ]


def admits(spec: Spec, identifier: str) -> tuple[Any, ...]:
    """The values the decision `identifier` admits; none when the spec does not make it."""
    return next((found.admits for found in decisions(spec) if found.id == identifier), ())
