"""The dedicated domain tests: rules Schemathesis cannot know, each judged on purpose-made requests.

One explicit table of the tests that run on each surface; `surfaces.run` needs both surfaces and is
called apart.
"""

from __future__ import annotations

from collections.abc import Callable

from contract_tests.judge.domain import (
    addressing,
    auth_matrix,
    bounds,
    encodings,
    fidelity,
    identifier_variants,
    immutability,
    lifecycle,
    locality,
    ordering,
    pagination,
    referential,
    unknown,
)
from contract_tests.judge.domain.data import Context
from contract_tests.judge.domain.http import Session

DomainTest = Callable[[Context, Session], None]

PER_SURFACE: dict[str, DomainTest] = {
    "auth_matrix": auth_matrix.run,
    "pagination_walk": pagination.run,
    "lifecycle": lifecycle.run,
    "body_encodings": encodings.run,
    "referential_rules": referential.run,
    "invalid_values_rejected": bounds.run,
    "identifier_addressable": addressing.run,
    "identifier_immutable": immutability.run,
    "patch_locality": locality.run,
    "read_back": fidelity.run,
    "unknown_not_found": unknown.run,
    "list_order": ordering.run,
    "identifier_variants": identifier_variants.run,
}
ALONE = frozenset({"pagination_walk", "referential_rules", "read_back", "list_order"})
"""Tests that read whole lists or a list's count: nothing else may write while they run, so they run one
at a time before the others, which may run side by side (each writes only items it made)."""
