"""A violation as people read it: its check and place, the rule it broke, then its evidence.

The evidence is the requests that set up its state, the failing request and the answer. The summary,
the JUnit file and the pytest plugin's failures all show this one text.
"""

from __future__ import annotations

from contract_tests.outcome.findings import Violation
from contract_tests.outcome.fingerprint import violation_id


def describe(number: int, violation: Violation) -> str:
    """Violation `number` of a run, with its evidence, one part a line. A multi-line part is indented."""
    indent = "\n       "
    setup = [
        "   setup (the requests that make the state it depends on, in order):"
        + "".join(indent + curl.replace("\n", indent) for curl in violation.setup)
    ]
    return "\n".join(
        [
            f"{number}. [{violation.check}] {violation.surface} {violation.operation} (id {violation_id(violation)})",
            f"   rule broken: {violation.rule}",
            *(setup if violation.setup else []),
            "   request:" + indent + violation.curl.replace("\n", indent),
            "   response:" + indent + violation.response.replace("\n", indent),
        ]
    )
