"""What a peer sent, quoted in the mock's reports and logs: cut to a bounded length, in one place.

A validation error quotes the value it concerns, and a protocol error the bytes it choked on: a
backend answering a 2 MiB string made a 2 MiB message, kept at /__mock__/violations, in the journal
and in the log, once per answer. Every message built from a peer's value goes through `cut` before
it is kept, logged or answered. The middle goes: a message names its field first and the rule
broken last, and both stay.
"""

from __future__ import annotations

MESSAGE_CHARS = 1024  # a message longer than this keeps its first and last halves of it


def cut(text: str) -> str:
    """`text`, or past `MESSAGE_CHARS` its two ends and how many characters were cut between them."""
    if len(text) <= MESSAGE_CHARS:
        return text
    keep = MESSAGE_CHARS // 2
    return f"{text[:keep]} [... {len(text) - 2 * keep} characters cut ...] {text[-keep:]}"
