"""What a peer sent, quoted in the mock's answers, reports and logs: bounded, by one rule.

A message may name a value a client sent: a query parameter, a path's identifier, a field of a fault
rule, a `Prefer` token. It may also quote the text a peer's error carries: a backend's answer, a
Redis error, an exception's message. Unbounded, a 2 MiB string made a 2 MiB message. That message was
answered, kept at /__mock__/violations, and written to the journal and the log. So there are two
bounds:

- `quote(value)` is how a message quotes one value. It shows the value's `repr`, whose quotes and
  escapes keep any control character from acting on a terminal. It keeps the first `QUOTED`
  characters, and says how long the value was.
- `printable(text)` escapes each character a terminal acts on: an escape, a line feed, U+2028. So a
  peer's words in a text read on a terminal add no line and move no cursor.
- `cut(text)` bounds a whole message. Past `MESSAGE_CHARS`, its middle goes. A message names its
  field first and the rule broken last, so both stay. Every Problem body's detail and field errors
  are cut (`errors.problem_body`), and so are the exceptions' texts the mock logs.
"""

from __future__ import annotations

import reprlib

MESSAGE_CHARS = 1024  # A message longer than this keeps the first and last halves of this many characters.
QUOTED = 40  # The characters of a value quoted in a message, because a header or a path may hold 32 KiB.
_SHOWN = reprlib.Repr()  # Python 3.11's Repr takes no arguments, so its limits are set below.
_SHOWN.maxlevel, _SHOWN.maxstring, _SHOWN.maxother, _SHOWN.maxlist, _SHOWN.maxdict = 2, QUOTED, QUOTED, 4, 4


def cut(text: str) -> str:
    """`text`, or past `MESSAGE_CHARS` its two ends and how many characters were cut between them."""
    if len(text) <= MESSAGE_CHARS:
        return text
    keep = MESSAGE_CHARS // 2
    return f"{text[:keep]} [... {len(text) - 2 * keep} characters cut ...] {text[-keep:]}"


def quote(value: object) -> str:
    """`value` as a client sent it, quoted.

    A string is cut to `QUOTED` characters, saying how long it was. Anything else, a JSON value, is shown
    to a bounded size and depth."""
    if not isinstance(value, str):
        try:
            return _SHOWN.repr(value)
        except ValueError:  # An int past Python's 4,300 digits, nested in a value.
            return f"(a {type(value).__name__} too large to show)"
    if len(value) <= QUOTED:
        return repr(value)
    return f"{value[:QUOTED]!r}... ({len(value)} characters)"


def printable(text: str) -> str:
    """`text` with each character a terminal would act on written as its escape, whole (not bounded)."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
