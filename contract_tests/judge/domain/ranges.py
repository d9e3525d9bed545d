"""Values from the whole range a request schema admits, not from its examples.

Each writable field gets two ends of its range, derived from its schema.
- `HIGH` is the longest string its `maxLength` allows, its `maximum`, and the largest decimal its
  pattern admits. The string is written in text beyond Latin-1: accents, CJK, right-to-left scripts,
  emoji outside the Basic Multilingual Plane and combining accents.
- `LOW` is its shortest string, its `minimum`, the smallest decimal, and null where it is nullable.
  The shortest string is one emoji outside the BMP where `minLength` is 1.

A string with no `maxLength` gets `UNBOUNDED_LENGTH` characters. A field of any other kind keeps the
value it is given.
"""

from __future__ import annotations

import re
import unicodedata
from itertools import cycle, islice
from typing import Any

from contract_tests.spec import JSON

HIGH = "high"
LOW = "low"
WIDE_TEXT = "Zoë Łódź 中文字 עִבְרִית مرحبا 🚗 Cafe\u0301 😀 ひらがな Ωμέγα \U0001d518"
"""Latin beyond Latin-1, CJK, Hebrew with points, Arabic, emoji outside the BMP, a combining accent."""
SHORTEST = "🚗"
"""One code point outside the BMP, which is two UTF-16 units and four UTF-8 bytes."""
UNBOUNDED_LENGTH = 600
DIGITS = re.compile(r"\\d\{(\d*),(\d+)\}")


def wide_text(length: int) -> str:
    """`length` code points of `WIDE_TEXT`, neither starting nor ending with white space or a combining mark.

    A service may trim the one, and the other has nothing to combine with."""
    if length <= 0:
        return ""
    text = list(islice(cycle(WIDE_TEXT), length))
    if text[0].isspace() or unicodedata.combining(text[0]):
        text[0] = "Z"
    if text[-1].isspace() or unicodedata.combining(text[-1]):
        text[-1] = SHORTEST
    return "".join(text)


def decimal_end(prop: JSON, side: str) -> str | None:
    """The largest (HIGH) or smallest (LOW) decimal the field's pattern admits.

    It has as many integer and fraction digits as its `\\d{m,n}` groups allow. It is negative where the
    pattern allows a minus sign."""
    pattern = str(prop.get("pattern", ""))
    groups = DIGITS.findall(pattern)
    if not groups:
        return None
    whole = "9" * int(groups[0][1])
    fraction = "9" * int(groups[1][1]) if len(groups) > 1 else ""
    number = f"{whole}.{fraction}" if fraction else whole
    if side == LOW:
        return f"-{number}" if re.search(r"\^?-\?", pattern) else "0"
    return number


def end_value(prop: JSON, side: str, value: Any) -> Any:
    """The `side` end of the range of the field `prop` describes, or `value` when the schema gives none."""
    if side == LOW and prop.get("nullable"):
        return None
    if prop.get("format") == "decimal":
        found = decimal_end(prop, side)
        return value if found is None else found
    if prop.get("type") == "integer":
        bound = prop.get("maximum" if side == HIGH else "minimum")
        return value if bound is None else int(bound)
    if prop.get("type") == "string" and "format" not in prop and "pattern" not in prop and "enum" not in prop:
        if side == LOW:
            return SHORTEST if prop.get("minLength", 0) <= 1 else wide_text(int(prop["minLength"]))
        return wide_text(int(prop.get("maxLength", UNBOUNDED_LENGTH)))
    return value


def one_past(prop: JSON) -> str | None:
    """A string one code point longer than the field's `maxLength`, in text beyond Latin-1. None if unbounded."""
    return wide_text(int(prop["maxLength"]) + 1) if "maxLength" in prop else None
