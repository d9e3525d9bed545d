"""Whatever a target sends, what the suite shows of it is safe: no control character, well-formed XML
in the JUnit file, and no secret the suite sent."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

from hypothesis import given
from hypothesis import strategies as st

from contract_tests.outcome import report
from contract_tests.outcome.findings import (
    HEADER_EXCERPT,
    HEADERS_SHOWN,
    Ledger,
    RunError,
    Skip,
    Violation,
    describe_response,
)
from contract_tests.outcome.junit import junit_xml
from contract_tests.redact import MASK, Redactor, escape, shown_bytes

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
    junit = ET.fromstring(junit_xml(ledger))
    shown = [report.summary(ledger), json.dumps(report.as_json(ledger), ensure_ascii=False)]
    shown += [value for element in junit.iter() for value in [element.text or "", *element.attrib.values()]]
    for output in shown:
        assert SECRET not in output
        assert not any((ord(c) < 32 and c not in "\n\t") or 0x7F <= ord(c) <= 0x9F for c in output), repr(output)
        assert not any(0xD800 <= ord(c) <= 0xDFFF for c in output)


def test_secrets_are_masked_and_escapes_shown() -> None:
    shown = Redactor((SECRET, "k"))("\x1b[2JBearer s3cret-api-key\x00ok")
    assert shown == f"\\x1b[2JBearer {MASK}\\x00ok"


@given(st.binary(max_size=300))
def test_bytes_a_target_sent_show_as_text_that_names_each_byte(data: bytes) -> None:
    """UTF-8 where the bytes are; every other byte as \\xNN, controls and bidi overrides escaped: the
    shown text encodes as ASCII-safe escapes, and bytes that are not UTF-8 stay distinguishable."""
    shown = shown_bytes(data)
    assert escape(shown) == shown
    assert shown_bytes(data, 10) == shown or shown_bytes(data, 10) == shown[:10] + " …"


def test_bytes_are_shown_by_one_rule() -> None:
    assert shown_bytes("\u202eok é".encode()) == "\\u202eok é"
    assert shown_bytes(b"caf\xe9 \x1b[2J") == "caf\\xe9 \\x1b[2J"
    assert shown_bytes(b"x" * 30, 20) == "x" * 20 + " …"


def test_evidence_shows_every_part_of_an_answer_as_its_bytes() -> None:
    headers = [(b"X-\xe2\x80\xae", b"\x1b[31m\xff"), *((b"X-Many", b"v" * 600) for _ in range(60))]
    shown = describe_response(200, headers, b'{"name": "caf\xe9"}').splitlines()
    assert shown[1] == "X-\\u202e: \\x1b[31m\\xff"
    assert shown[2] == "X-Many: " + "v" * HEADER_EXCERPT + " …"
    assert shown[HEADERS_SHOWN + 1] == "… and 11 more header(s)"
    assert shown[-1] == '{"name": "caf\\xe9"}'
