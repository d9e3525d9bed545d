"""A JSON body reads the same whichever parser reads it.

`validation.parse_json` hands a plain UTF-8 body to orjson (a third of the standard parser's time)
and everything orjson refuses to the standard parser. That is only sound if, wherever orjson
accepts, the standard parser (`inputs.load_json`, the rule) gives the very same value, types and key
order included, and wherever the standard parser refuses, orjson refuses too. Hypothesis writes
JSON documents, some of them broken by a byte, and both readings must agree on each.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from mock_server.api.validation import parse_json, plain_json
from mock_server.spec.errors import BadRequest
from mock_server.spec.inputs import load_json

BOUNDS = [2**63 - 1, 2**63, -(2**63), -(2**63) - 1, 2**64 - 1, 2**64, 10**18, -(10**18)]
scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.sampled_from(BOUNDS)
    | st.floats()  # NaN and the infinities too: the standard parser reads them, orjson does not
    | st.text(max_size=12)
)
documents = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=4), children, max_size=4),
    max_leaves=16,
)
NOISE = b'{}[],:"\\ 0123456789-+.eEtfnul\x00\x1f\x7f\xef\xbb\xbf\xff'


def reading(read: Any, raw: bytes) -> tuple[str, str]:
    """What `read` makes of `raw`: its value as repr (types, key order, NaN), or its refusal."""
    try:
        return "value", repr(read(raw))
    except BadRequest as refusal:
        return "refused", str(refusal)


def standard(raw: bytes) -> Any:
    """The reading before orjson: the text decoded strictly, then `load_json`."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise BadRequest("The request body is not valid utf-8.") from None
    return load_json(text)


@settings(max_examples=400, deadline=None)
@given(
    document=documents,
    ascii_only=st.booleans(),
    indent=st.sampled_from([None, 0, 2]),
    edit=st.none() | st.tuples(st.integers(0, 10**6), st.sampled_from(NOISE), st.booleans()),
)
@example(document={"b": 1, "a": 2}, ascii_only=False, indent=None, edit=(5, ord(","), True))
@example(document=2**64, ascii_only=False, indent=None, edit=None)
@example(document="\ufeff", ascii_only=False, indent=None, edit=None)
def test_orjson_and_the_standard_parser_read_a_body_alike(
    document: Any, ascii_only: bool, indent: int | None, edit: tuple[int, int, bool] | None
) -> None:
    raw = json.dumps(document, ensure_ascii=ascii_only, indent=indent).encode()
    if edit is not None:  # one byte inserted, or replaced: often no longer JSON
        at, byte, insert = edit
        at %= len(raw) + 1
        raw = raw[:at] + bytes([byte]) + raw[at + (0 if insert else 1) :]
    assert reading(lambda body: parse_json(body, "utf-8"), raw) == reading(standard, raw)


def test_a_body_with_an_escape_a_long_number_or_deep_brackets_goes_to_the_standard_parser() -> None:
    assert plain_json(b'{"productcode": "S10_1678", "quantityinstock": 7933}')
    assert not plain_json(b'{"name": "caf\\u00e9"}')
    assert not plain_json(b'{"quantityinstock": 1234567890123456789}')
    assert not plain_json(b"[" * 33 + b"]" * 33)
