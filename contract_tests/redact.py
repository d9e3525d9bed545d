"""What a target sends, made safe to show: secrets masked, control characters escaped.

Answers reach the terminal, summary.txt, findings.json and the JUnit file. A target may put harm in them.
- ANSI escape sequences in an error body can clear the screen or fake a green result.
- Characters XML 1.0 forbids make the JUnit file unparsable.
- An echo of the request's headers shows the API key or the token.

So every text the suite writes passes through a `Redactor`. Each secret the suite sent becomes MASK.
Every control character but newline and tab is shown as a Python-style escape (`\\x1b`).

What a target sends is read as bytes: the status line, header names and values, and the body.
`shown_bytes` is the one rule turning them into text to show, bounded, before any report sees them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MASK = "[masked]"
MIN_SECRET = 4
"""Shorter values are not masked. Masking "k" would garble every text and hide nothing worth hiding."""

# C0 and C1 controls but \t and \n, DEL, lone surrogates, non-characters XML forbids, and bidi overrides.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff\u202a-\u202e\u2066-\u2069]")


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def escape(text: str) -> str:
    """`text` with every character that could act on a terminal or break XML shown as an escape."""
    return _UNSAFE.sub(_escaped, text)


def bounded(text: str, limit: int) -> str:
    """`text` cut to `limit` characters, the cut marked."""
    return text if len(text) <= limit else text[:limit] + " …"


def shown_bytes(data: bytes, limit: int | None = None) -> str:
    """Bytes a target sent, as the suite shows them. They are UTF-8 where they are, every other byte as
    `\\xNN`, then escaped like any text and cut to `limit` characters. So whatever a target sends (a
    header of latin-1 or of bidi overrides, a body in a charset that lies) shows the same way in every
    report."""
    text = escape(data.decode("utf-8", "backslashreplace"))
    return text if limit is None else bounded(text, limit)


@dataclass(frozen=True)
class Redactor:
    secrets: tuple[str, ...] = ()

    def __call__(self, text: str) -> str:
        for secret in sorted({s for s in self.secrets if len(s) >= MIN_SECRET}, key=len, reverse=True):
            text = text.replace(secret, MASK)
        return escape(text)
