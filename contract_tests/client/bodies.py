"""How the suite reads an answer's body: as bytes, in the charset it declares, never trusting that
declaration to be true or even known.

A target may send a body the suite must still read.
- A charset no codec knows (`charset=x-unknown`, a right-to-left override).
- A charset that is no text encoding (`rot13`, `base64`).
- A charset that lies (`utf-16` over UTF-8 bytes).
- Bytes its charset does not allow (latin-1 under `utf-8`).

Every reader of a body reads it with `text_codec` or `lenient_json`, which never raise for such a body.
The readers are the start-up probe, the domain tests, Schemathesis' requests session and the checks.
Whether the body can be decoded as it says is `undecodable`, the rule of the `response_decodable` check.
"""

from __future__ import annotations

import codecs
import json
from typing import Any

from contract_tests.redact import bounded, escape, shown_bytes

NOT_HTTP_CHARSETS = frozenset({"unicode-escape", "raw-unicode-escape", "idna", "punycode", "undefined", "mbcs"})
"""Python codecs that decode text but are no charset a client of HTTP knows."""
EXCERPT = 40
"""Bytes shown on either side of the first byte that does not decode."""
CHARSET_SHOWN = 100


def media_type(content_type: str | None) -> str:
    return (content_type or "").split(";")[0].strip().lower()


def is_json(content_type: str | None) -> bool:
    kind = media_type(content_type)
    return kind == "application/json" or kind.endswith("+json")


def declared_charset(content_type: str | None) -> str | None:
    """The `charset` parameter of a Content-Type, as sent with quotes removed. None when there is none."""
    for parameter in (content_type or "").split(";")[1:]:
        name, equals, value = parameter.partition("=")
        if equals and name.strip().lower() == "charset":
            return value.strip().strip('"')
    return None


def text_codec(charset: str | None) -> str | None:
    """The codec of `charset` if it is a text encoding of HTTP this Python knows, None otherwise."""
    if charset is None:
        return None
    try:
        name = codecs.lookup(charset).name
    except (LookupError, ValueError):  # A NUL in the name raises ValueError.
        return None
    try:
        b"a".decode(name)
    except LookupError:  # A codec of bytes to bytes (rot13, base64).
        return None
    except UnicodeError:  # One byte is no whole character in UTF-16, which is still a text encoding.
        pass
    return None if name.replace("_", "-") in NOT_HTTP_CHARSETS else name


def lenient_text(content: bytes, content_type: str | None) -> str:
    """The body as text, in its charset if known, else UTF-8. A byte that does not decode becomes U+FFFD."""
    return content.decode(text_codec(declared_charset(content_type)) or "utf-8", "replace")


def lenient_json(content: bytes, content_type: str | None) -> Any:
    """The body's JSON, read as a lax client reads it. Its bytes are read as UTF-8 (or UTF-16/32,
    detected), else its text as `lenient_text` decodes it. It raises ValueError when the body is not JSON
    and RecursionError when it is too deep."""
    try:
        return json.loads(content)
    except UnicodeDecodeError:
        return json.loads(lenient_text(content, content_type))


def _named(charset: str | None) -> str:
    """A charset as the target named it, shown by the rule for what a target sends, since it may be anything."""
    return bounded(escape(charset or ""), CHARSET_SHOWN)


def _at(content: bytes, error: UnicodeDecodeError) -> str:
    start = max(0, error.start - EXCERPT)
    before = "…" if start else ""
    after = "…" if error.start + EXCERPT < len(content) else ""
    return f"byte {error.start} does not decode: {before}{shown_bytes(content[start : error.start + EXCERPT])}{after}"


def undecodable(content: bytes, content_type: str | None) -> str | None:
    """Why a client cannot read the body as its Content-Type says. None when it can, or says nothing.

    A charset must be a text encoding a client knows, and the body's bytes must be valid in it. JSON is
    UTF-8 (RFC 8259, 8.1). So its bytes must be valid UTF-8, and a declared charset must read them as the
    same text.
    """
    if not content:
        return None
    charset = declared_charset(content_type)
    codec = text_codec(charset)
    if charset is not None and codec is None:
        return f"the body declares charset={_named(charset)}, no text encoding a client knows"
    if is_json(content_type):
        try:
            text = content.decode("utf-8")
        except UnicodeDecodeError as exc:
            return f"a JSON body is UTF-8 (RFC 8259, 8.1); {_at(content, exc)}"
        if codec is not None and codec != "utf-8":
            try:
                differs = content.decode(codec) != text
            except UnicodeDecodeError:
                differs = True
            if differs:
                return f"the body declares charset={_named(charset)}, but its bytes are UTF-8 JSON it reads otherwise"
        return None
    if codec is not None:
        try:
            content.decode(codec)
        except UnicodeDecodeError as exc:
            return f"the body is not valid {_named(charset)}: {_at(content, exc)}"
    return None
