"""Whatever a server sends, the suite ends in a verdict, with every report written and well-formed.

A raw socket server (hostile_http.py) answers one operation of the real mock with what Hypothesis
generates: status lines, header names and values (every byte HTTP/1.1 lets through h11 and
http.client, and what they tolerate beyond it), charsets, framings and chunk splits, bodies. The suite
runs in process (`cli.main`, its standard output an ASCII-only stream, as on a terminal without UTF-8)
and must exit 0, 1, or 2 with one line, with no error of its own (an internal error, or a part of the
run failed by an exception that is no network cause), its reports (summary.txt, findings.json valid
against its schema, junit.xml parsing as XML, report.html holding findings.json's document, the job
summary) written, and nothing it shows holding a character that acts on a terminal.

The default run tries a fixed seed's examples (about 20 s, a minute on a loaded machine); `tox -e fuzz` tries
FUZZ_HOSTILE_EXAMPLES (default 200) of each.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

from contract_tests import cli
from contract_tests.outcome import findings_file
from contract_tests.outcome.step_summary import VARIABLE
from contract_tests.redact import escape
from mock_server.app import create_app
from mock_server.settings import Settings
from tests.support.hostile_http import HostileServer, RawAnswer, serving
from tests.support.live import running
from tests.support.suite import credentials

API = "/shop/api/v1"
ITEM = f"{API}/products/[^/]+/"
DEFAULT_EXAMPLES = {"domain": 5, "conformance": 3}
LONG = int(os.environ.get("FUZZ_HOSTILE_EXAMPLES", "200"))
RUN = ["--seed", "5", "--profile", "fast", "--max-examples", "1", "--include", "get_product"]
DEADLINE = 1.0
"""`--request-timeout` of the runs against generated answers: one that never ends whole costs a run this much."""
WHOLE = 10.0
"""`--request-timeout` for an answer sent whole at once: a loaded machine delayed one past `DEADLINE` (once in
CI: a `response_time` violation, which carries no answer to show)."""
PARTS = {"domain": ["--no-conformance"], "conformance": ["--no-domain"]}

TOKEN = b"!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
FIELD_BYTES = bytes([9, *range(0x20, 0x7F), *range(0x80, 0x100)])
"""What RFC 9112 lets through in a header value or reason phrase: HTAB, SP, VCHAR, obs-text."""
ANY_BUT_LINE_ENDS = bytes(b for b in range(256) if b not in b"\r\n")
"""What http.client tolerates there (controls, NUL): h11 refuses it, requests takes it."""
CODES = [b"200", b"201", b"204", b"301", b"304", b"400", b"401", b"404", b"500", b"100", b"101", b"599", b"999"]
RLO = "\u202e"
KNOWN_NAMES = [
    b"Content-Type",
    b"Set-Cookie",
    b"Link",
    b"Location",
    b"WWW-Authenticate",
    b"Allow",
    b"Retry-After",
    b"Content-Encoding",
    b"Content-Disposition",
    b"X-Request-Id",
]
CHARSETS = [
    "utf-8",
    "UTF-8",
    "latin-1",
    "iso-8859-1",
    "us-ascii",
    "utf-16",
    "utf-16-be",
    "utf-32",
    "cp1252",
    "shift_jis",
    "utf-7",
    "x-unknown",
    "rot13",
    "base64",
    "undefined",
    "unicode_escape",
    "",
    '"utf-8"',
    RLO,
    "utf-8\x00",
]
MEDIA_TYPES = ["application/json", "application/problem+json", "text/html", "text/plain", "application/octet-stream"]
PRODUCT = {
    "productcode": "S10_1678",
    "productname": f"1969 Harley {RLO}Davidson\x1b[2J Ultimate Chopper é 🚗",
    "productline": "Motorcycles",
    "productscale": "1:10",
    "productvendor": "Min Lin Diecast",
    "productdescription": "x" * 300,
    "quantityinstock": 7933,
    "buyprice": "48.81",
    "msrp": "95.70",
}


def field_text(alphabet: bytes, max_size: int = 60) -> st.SearchStrategy[bytes]:
    return st.lists(st.sampled_from(alphabet), max_size=max_size).map(bytes)


def encoded(text: str, charset: str) -> bytes:
    """`text` in `charset` as a lax server would write it: unknown or unencodable becomes UTF-8 or '?'."""
    try:
        return text.encode(charset.strip('"'), "replace")
    except (LookupError, ValueError):
        return text.encode("utf-8", "surrogatepass")


charsets = st.sampled_from(CHARSETS) | st.text(max_size=12)
content_types = st.builds(
    lambda media, charset, tail: (
        (f"{media}; charset={charset}" if charset is not None else media).encode("utf-8", "surrogatepass") + tail
    ),
    st.sampled_from(MEDIA_TYPES) | st.text(max_size=20),
    st.none() | charsets,
    st.just(b"") | field_text(FIELD_BYTES, 20),
)
header_values = st.one_of(
    field_text(FIELD_BYTES),
    st.sampled_from(
        [
            RLO.encode(),
            b"\xff\xfe\x00",
            b"\x1b[2J\x1b[32mok",
            b"dev-api-key",
            b"a" * 8000,
            b'<http://127.0.0.1:1/\xe2\x80\xae>; rel="next"',
            b"session=\xe2\x80\xae\xff; Path=/; HttpOnly",
            b"gzip",
            b"http://[::1",
        ]
    ),
    field_text(ANY_BUT_LINE_ENDS, 30),
)
header_names = (
    st.sampled_from(KNOWN_NAMES)
    | field_text(TOKEN, 20).filter(bool)
    | field_text(bytes(b for b in range(33, 256) if b != ord(":")), 10).filter(bool)
)
bodies = st.one_of(
    st.binary(max_size=200),
    st.builds(encoded, st.just(json.dumps(PRODUCT, ensure_ascii=False)), charsets),
    st.builds(
        lambda text: json.dumps({"detail": text}, ensure_ascii=False).encode("utf-8", "surrogatepass"), st.text()
    ),
    st.just(b"[" * 5000 + b"]" * 5000),
)
answers = st.builds(
    RawAnswer,
    status_line=st.builds(
        lambda version, code, reason: version + b" " + code + b" " + reason,
        st.sampled_from([b"HTTP/1.1", b"HTTP/1.0"]),
        st.sampled_from(CODES),
        field_text(FIELD_BYTES, 40) | field_text(ANY_BUT_LINE_ENDS, 20),
    ),
    headers=st.lists(
        st.tuples(st.just(b"Content-Type"), content_types) | st.tuples(header_names, header_values), max_size=6
    ).map(tuple),
    body=bodies,
    framing=st.sampled_from(["length", "chunked", "close", "short"]),
    splits=st.lists(st.integers(0, 200), max_size=5).map(tuple),
)

RLO_IN_A_HEADER = RawAnswer(
    b"HTTP/1.1 200 OK",
    ((b"Content-Type", b"application/json"), (b"X-Note", RLO.encode())),
    json.dumps(PRODUCT).encode(),
)
HOSTILE_EVERYWHERE = RawAnswer(
    b"HTTP/1.1 200 \xe2\x80\xae\x1b[2J\xff",
    (
        (b"Content-Type", "application/json; charset=\u202e".encode()),
        (b"X-\xe2\x80\xae", b"\x1b[31m\xff"),
        (b"Set-Cookie", b"session=\xe2\x80\xae\xff; Path=/"),
        (b"Link", b'<http://127.0.0.1:1/\xe2\x80\xae>; rel="next"'),
    ),
    json.dumps(PRODUCT, ensure_ascii=False).encode("utf-8"),
    "chunked",
    (1, 2, 3, 50),
)
LATIN1_DECLARED_UTF8 = RawAnswer(
    b"HTTP/1.1 200 OK",
    ((b"Content-Type", b"application/json; charset=utf-8"),),
    json.dumps(PRODUCT, ensure_ascii=False).encode("latin-1", "replace"),
)


@pytest.fixture(scope="module")
def hostile() -> Iterator[tuple[HostileServer, str]]:
    with running(create_app(Settings())) as upstream:
        server = HostileServer(upstream, "GET", ITEM)
        with serving(server) as origin:
            yield server, origin


class _Page(HTMLParser):
    """The findings blob of report.html, and whether every element opened was closed."""

    VOID = frozenset({"meta", "link", "br", "img", "input", "hr", "col", "area", "base", "wbr", "source"})

    def __init__(self) -> None:
        super().__init__()
        self.open: list[str] = []
        self.blob: str | None = None
        self._in_findings = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in self.VOID:
            self.open.append(tag)
        self._in_findings = tag == "script" and ("id", "findings") in attrs

    def handle_endtag(self, tag: str) -> None:
        assert self.open and self.open.pop() == tag, f"</{tag}> closes nothing open"
        self._in_findings = False

    def handle_data(self, data: str) -> None:
        if self._in_findings:
            self.blob = (self.blob or "") + data


def judged(
    server: HostileServer, origin: str, answer: RawAnswer, part: str, deadline: float = DEADLINE
) -> dict[str, Any]:
    """One run of the suite against `answer` within `deadline` a request, and every property it must hold;
    its findings."""
    server.answer, server.answered = answer, 0
    with tempfile.TemporaryDirectory() as directory:
        reports, summary = Path(directory), Path(directory) / "job-summary.md"
        out, err = io.TextIOWrapper(io.BytesIO(), encoding="ascii"), io.StringIO()
        args = ["--base-url", origin + API, *credentials(origin), *RUN, *PARTS[part], "--report-dir", str(reports)]
        args += ["--request-timeout", f"{deadline:g}"]
        previous = os.environ.get(VARIABLE)
        os.environ[VARIABLE] = str(summary)
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):  # type: ignore[type-var]
                code = cli.main(args)
                out.flush()
        finally:
            os.environ.pop(VARIABLE) if previous is None else os.environ.__setitem__(VARIABLE, previous)
        assert isinstance(out.buffer, io.BytesIO)
        stdout, stderr = out.buffer.getvalue().decode("ascii"), err.getvalue()
        assert code in (0, 1, 2), code
        assert code != 2 or len(stderr.strip().splitlines()) == 1, stderr
        assert server.answered, "the hostile answer was never asked for"
        findings = findings_file.load(reports / "findings.json")
        assert not (findings.get("aborted") or "").startswith("internal error"), findings["aborted"]
        own = [error for error in findings["errors"] if error["cause"].startswith("other")]
        assert not own, own
        ET.parse(reports / "junit.xml")
        page = _Page()
        page.feed((reports / "report.html").read_text(encoding="utf-8"))
        assert page.blob is not None and json.loads(page.blob) == findings
        shown = [stdout, stderr, summary.read_text(encoding="utf-8")]
        shown += [
            (reports / name).read_text(encoding="utf-8") for name in ("summary.txt", "junit.xml", "findings.json")
        ]
        for text in shown:
            assert escape(text) == text, _first_unsafe(text)
        return findings


def _first_unsafe(text: str) -> str:
    at = next(i for i, (a, b) in enumerate(zip(text, escape(text), strict=False)) if a != b)
    return repr(text[max(0, at - 80) : at + 20])


def _given(part: str, explicit: tuple[RawAnswer, ...]) -> Any:
    """The property for `part`: its `explicit` examples, then DEFAULT_EXAMPLES[part] generated ones."""

    def property_of(hostile: tuple[HostileServer, str], answer: RawAnswer) -> None:
        judged(*hostile, answer, part)

    test = given(answer=answers)(property_of)
    for known in reversed(explicit):
        test = example(answer=known)(test)
    return settings(
        max_examples=DEFAULT_EXAMPLES[part],
        derandomize=True,
        phases=[Phase.explicit, Phase.generate],  # a run takes seconds: shrinking one would take minutes
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )(test)


test_the_domain_tests_judge_any_answer = _given("domain", (RLO_IN_A_HEADER, HOSTILE_EVERYWHERE, LATIN1_DECLARED_UTF8))
test_schemathesis_judges_any_answer = _given("conformance", (RLO_IN_A_HEADER, HOSTILE_EVERYWHERE))


def test_what_a_target_sent_shows_as_its_bytes(hostile: tuple[HostileServer, str]) -> None:
    """A header and a body not in UTF-8, each shown by the one rule (redact.shown_bytes) in the evidence."""
    headers = ((b"Content-Type", b"application/json"), (b"X-Note", RLO.encode() + b"\xff"))
    answer = RawAnswer(b"HTTP/1.1 200 \xe2\x80\xae\xff", headers, b'{"productname": "caf\xe9"}')
    found = judged(*hostile, answer, "domain", WHOLE)["violations"]
    for violation in found:
        assert "x-note: \\u202e\\xff" in violation["response"].lower(), violation
        assert "caf\\xe9" in violation["response"], violation
    assert any(v["check"] == "response_decodable" and "caf\\xe9" in v["rule"] for v in found), found


@pytest.mark.slow
@pytest.mark.parametrize("part", PARTS)
def test_the_suite_judges_any_answer_long(hostile: tuple[HostileServer, str], part: str) -> None:
    @settings(max_examples=LONG, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(answer=answers)
    def judged_long(answer: RawAnswer) -> None:
        judged(*hostile, answer, part)

    judged_long()
