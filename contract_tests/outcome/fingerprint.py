"""What names a violation: its fingerprint (the defect) and its id (this finding of it).

The fingerprint is what a baseline accepts. It holds the surface, the operation, the check and the rule
broken, with the generated values left out (quoted text and numbers). So the same defect found by
another seed or another input is the same entry.

The id is short and names one violation with its requests. The reports show it, and `shop-contract
replay ID` re-sends it.
"""

from __future__ import annotations

import hashlib
import re

from contract_tests.outcome.findings import Violation

RULE_SHAPE_LENGTH = 200
"""Characters of the rule's shape kept in a fingerprint. They are enough to tell rules apart, never a whole
quote."""
_QUOTED = re.compile(r"(?<!\w)'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\"")
"""A quoted value. An apostrophe inside a word (`the gateway's answer`) opens none, so that the words after
it stay in the shape and a value after them is still found."""
_ORIGIN = re.compile(r"\bhttps?://[^/\s'\"`]+", re.IGNORECASE)
"""A URL's scheme and authority. They are the target's, which a baseline outlives (a staging host, a local
port)."""
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_SPACE = re.compile(r"\s+")


def rule_shape(rule: str) -> str:
    """`rule` without what a run generated. It keeps the first line, with quoted values as `'…'`, a URL's
    origin as `<origin>` and numbers as `N`.

    Backquoted names (`next`, a field) stay: they name the rule, not the input.
    """
    first = rule.strip().splitlines()[0] if rule.strip() else ""
    shape = _NUMBER.sub("N", _ORIGIN.sub("<origin>", _QUOTED.sub("'…'", first)))
    return _SPACE.sub(" ", shape).strip()[:RULE_SHAPE_LENGTH]


def fingerprint(violation: Violation) -> str:
    """`surface operation check: shape`, one line, stable across seeds and inputs."""
    return f"{violation.surface} {violation.operation} {violation.check}: {rule_shape(violation.rule)}"


def violation_id(violation: Violation) -> str:
    """Eight hexadecimal characters from the fingerprint, the rule, the failing request and its setup.

    The same finding has the same id in every report of a run, and in `merge`. Two findings of one defect
    have two ids. The ledger keeps one violation per id (`Ledger.violated`), so that `replay ID` names one.
    """
    named = "\n".join((fingerprint(violation), violation.rule, violation.curl, *violation.setup))
    digest = hashlib.sha256(named.encode("utf-8", "replace"))
    return digest.hexdigest()[:8]
