"""Whatever a target sends, what the suite shows of it is safe: no control character, well-formed XML
in the JUnit file, and no secret the suite sent."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

from hypothesis import given
from hypothesis import strategies as st

from contract_tests.outcome import report
from contract_tests.outcome.findings import Ledger, RunError, Skip, Violation
from contract_tests.redact import MASK, Redactor

SECRET = "s3cret-api-key"
any_text = st.text(st.characters(codec=None, exclude_categories=()), max_size=200)


def ledger_showing(text: str) -> Ledger:
    ledger = Ledger(secrets=(SECRET,))
    violation = Violation("round_trip", "backend", text, text, f"curl -H 'X-Echo: {SECRET}' {text}", text, (text,))
    ledger.violated(violation)
    ledger.passed("backend", text, "write_echo")
    ledger.not_exercised.append(Skip("backend", text, "pagination_walk", text))
    ledger.errors.append(RunError(text, text, text, text, text))
    ledger.aborted = text
    return ledger


@given(any_text)
def test_every_output_is_safe_whatever_the_target_sent(text: str) -> None:
    ledger = ledger_showing(f"{text}{SECRET}{text}")
    junit = ET.fromstring(report.junit_xml(ledger))
    shown = [report.summary(ledger), json.dumps(report.as_json(ledger), ensure_ascii=False)]
    shown += [value for element in junit.iter() for value in [element.text or "", *element.attrib.values()]]
    for output in shown:
        assert SECRET not in output
        assert not any((ord(c) < 32 and c not in "\n\t") or 0x7F <= ord(c) <= 0x9F for c in output), repr(output)
        assert not any(0xD800 <= ord(c) <= 0xDFFF for c in output)


def test_secrets_are_masked_and_escapes_shown() -> None:
    shown = Redactor((SECRET, "k"))("\x1b[2JBearer s3cret-api-key\x00ok")
    assert shown == f"\\x1b[2JBearer {MASK}\\x00ok"
