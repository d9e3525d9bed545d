"""What a peer sent, quoted in the mock's answers, reports and logs: bounded, by one rule.

A message names a value a client sent (a query parameter, a path's identifier, a field of a fault
rule, a `Prefer` token) or quotes the text a peer's error carries (a backend's answer, a Redis
error, an exception's message). Unbounded, a 2 MiB string made a 2 MiB message, answered, kept at
/__mock__/violations, in the journal and in the log. So:
- `quote(value)` is how a message quotes one value: its `repr` (quotes and escapes: no control
  character acts on a terminal), its first `QUOTED` characters, saying how long it was;
- `cut(text)` bounds a whole message: past `MESSAGE_CHARS` its middle goes (a message names its
  field first and the rule broken last, and both stay). Every Problem body's detail and field
  errors are cut (`errors.problem_body`), as are the exceptions' texts the mock logs.
"""

from __future__ import annotations

import reprlib

MESSAGE_CHARS = 1024  # a message longer than this keeps its first and last halves of it
QUOTED = 40  # characters of a value quoted in a message (a header or a path may hold 32 KiB)
_SHOWN = reprlib.Repr()  # Python 3.11's takes no arguments
_SHOWN.maxlevel, _SHOWN.maxstring, _SHOWN.maxother, _SHOWN.maxlist, _SHOWN.maxdict = 2, QUOTED, QUOTED, 4, 4


def cut(text: str) -> str:
    """`text`, or past `MESSAGE_CHARS` its two ends and how many characters were cut between them."""
    if len(text) <= MESSAGE_CHARS:
        return text
    keep = MESSAGE_CHARS // 2
    return f"{text[:keep]} [... {len(text) - 2 * keep} characters cut ...] {text[-keep:]}"


def quote(value: object) -> str:
    """`value` as a client sent it, quoted: a string cut to `QUOTED` characters (saying how long it
    was); anything else (a JSON value) shown to a bounded size and depth."""
    if not isinstance(value, str):
        try:
            return _SHOWN.repr(value)
        except ValueError:  # an int past Python's 4,300 digits, nested in a value
            return f"(a {type(value).__name__} too large to show)"
    if len(value) <= QUOTED:
        return repr(value)
    return f"{value[:QUOTED]!r}... ({len(value)} characters)"
