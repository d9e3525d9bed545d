"""What the journal and the logs must never show: credentials, masked by one rule wherever they travel.

A credential is masked by name. Its name is kept and its value replaced by `***`, so a reader still
sees that a code was sent, but not the code. These are masked:

- The `Authorization` header, with its scheme kept, and the `Proxy-Authorization` and `X-API-Key`
  headers.
- Every cookie's value in `Cookie` and `Set-Cookie`, with the attributes kept.
- The `FIELDS` below wherever a URL or a body carries them. That is a URL's query and fragment (the
  request's query, `Location`, `Referer`), a form (multipart too), and a JSON body at any depth.

The realm's request bodies are read as forms whatever their type, because the realm reads them so. A
JSON body that does not parse, because it was cut at the journal's limit or is broken, is masked
whole if it is the realm's or names a credential.

`AccessLog` applies the same rule to the request lines of uvicorn's access log (`--access-log`).
"""

from __future__ import annotations

import email.parser
import email.policy
import email.utils
import json
import logging
import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import unquote_plus

MASK = "***"
FIELDS = frozenset(
    {
        "code",  # An authorization code, which can be redeemed for tokens.
        "session_state",  # The realm's session id, in a redirect and in a token response.
        "access_token",
        "id_token",
        "refresh_token",
        "id_token_hint",  # An ID token, in a logout URL.
        "code_verifier",
        "client_secret",
        "client_assertion",
        "password",
    }
)
WHOLE = frozenset({b"proxy-authorization", b"x-api-key"})
URLS = frozenset({b"location", b"content-location", b"referer"})


def headers(raw: Iterable[tuple[bytes, bytes]]) -> dict[str, str]:
    """Headers by lower-case name, with credentials masked. Repeated ones are joined by ", "."""
    result: dict[str, str] = {}
    for name, value in raw:
        key = name.lower()
        label = key.decode("latin-1")
        text = header(key, value.decode("latin-1"))
        result[label] = f"{result[label]}, {text}" if label in result else text
    return result


def header(name: bytes, value: str) -> str:
    """One header's value, masked by the rule for its lower-case name."""
    if name == b"authorization":
        scheme, space, _ = value.partition(" ")
        return f"{scheme} {MASK}" if space else MASK
    if name in WHOLE:
        return MASK
    if name == b"cookie":
        return "; ".join(cookie(part.strip()) for part in value.split(";"))
    if name == b"set-cookie":
        first, semicolon, attributes = value.partition(";")
        return f"{cookie(first)}{semicolon}{attributes}"
    if name in URLS:
        return url(value)
    return value


def cookie(pair: str) -> str:
    name, equals, _ = pair.partition("=")
    return f"{name}={MASK}" if equals else MASK


def url(text: str) -> str:
    """A URL, absolute or relative, with the credentials in its query and its fragment masked."""
    before, hash_mark, fragment = text.partition("#")
    path, question, query = before.partition("?")
    return f"{path}{question}{form(query)}{hash_mark}{form(fragment)}"


def form(text: str) -> str:
    """URL-encoded fields with credentials masked, and every other byte kept as sent.

    A field's name is decoded before it is compared, because the realm reads `pass%77ord` as `password`."""
    if not text:
        return text
    return "&".join(field(pair) for pair in text.split("&"))


def field(pair: str) -> str:
    name, equals, _ = pair.partition("=")
    return f"{name}={MASK}" if equals and unquote_plus(name) in FIELDS else pair


def body(text: str, content_type: str, realm: bool, request: bool) -> str:
    """A body's text with its credentials masked. `realm` says it is of an exchange with the realm.

    The realm reads any request body as a form, so its requests are masked as forms whatever their
    type. The realm's other bodies are shown only if read as JSON or forms, or if they are HTML (its
    pages)."""
    kind = content_type.partition(";")[0].strip().lower()
    if realm and request:
        text = form(text)
    if not text:
        return text
    if kind == "application/json" or kind.endswith("+json"):
        masked = json_text(text)
        if masked is not None:
            return masked
        return MASK if realm or any(f'"{name}"' in text for name in FIELDS) else text
    if kind == "application/x-www-form-urlencoded" or (realm and request):
        return form(text)
    if kind == "multipart/form-data":
        return multipart(text, content_type)
    return MASK if realm and kind != "text/html" else text


def multipart(text: str, content_type: str) -> str:
    """A multipart form with the values of its credential fields masked, and every other byte as sent.

    Its parts are found as the consumer contract reads them (`control/contract.py`), with Python's
    email parser. A part begins after a boundary line. Its headers end at the first line that is not
    a header, and the rest is its value. A part cut at the journal's limit is a part too. A form with
    no boundary to split it by is masked whole if it names a credential."""
    header = content_type.replace("\r", " ").replace("\n", " ")
    boundary = _HEADERS.parsestr(f"Content-Type: {header}\r\n\r\n").get_boundary()
    if not boundary:
        return MASK if any(name in text for name in FIELDS) else text
    line = re.compile(rf"(?:\A|(?<=[\r\n]))--{re.escape(boundary)}(--)?[ \t]*(?:\r\n|\r|\n|\Z)")
    shown: list[str] = []
    start = 0
    in_part = False  # Before the first boundary line comes the preamble.
    for found in line.finditer(text):
        piece = text[start : found.start()]
        shown.append(part(piece) if in_part else piece)
        shown.append(found.group())
        start, in_part = found.end(), not found.group(1)
        if not in_part:  # After the closing boundary, the rest is the epilogue.
            break
    rest = text[start:]
    shown.append(part(rest) if in_part else rest)
    return "".join(shown)


def part(text: str) -> str:
    """One part of a multipart form (headers, blank line, value), its value masked if it is a credential's field.

    The field's name is read from `Content-Disposition: form-data; name=...`."""
    headers = _HEADERS.parsestr(text)
    name = headers.get_param("name", header="content-disposition")
    if name is None or email.utils.collapse_rfc2231_value(name) not in FIELDS:
        return text
    value = headers.get_payload()
    if not value:  # The part was cut at the journal's limit before its value.
        return text
    ending = re.search(r"(?:\r\n|\r|\n)\Z", text)  # The line end before the next boundary line is that line's.
    end = ending.group() if ending else ""
    if isinstance(value, str) and text.endswith(value):
        return text[: len(text) - len(value)] + MASK + end
    return MASK + end


_HEADERS = email.parser.HeaderParser(policy=email.policy.HTTP)


def json_text(text: str) -> str | None:
    """JSON text with the credentials' values masked at any depth, and unchanged if it holds none.

    It is None if the text is not JSON or is nested too deep to walk. Such a body is hostile, and the
    journal's reader must not fail on it."""
    try:
        document = json.loads(text)
        masked = json_value(document)
        return text if masked == document else json.dumps(masked, separators=(",", ":"), ensure_ascii=False)
    except (ValueError, RecursionError):
        return None


def json_value(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: MASK if key in FIELDS else json_value(item) for key, item in value.items()}
    if isinstance(value, list):
        return [json_value(item) for item in value]
    return value


class AccessLog(logging.Filter):
    """The credentials in uvicorn's access log lines masked.

    A logout URL carries `id_token_hint`. A page the mock serves may be a redirect URI given a `code`,
    such as Swagger UI's oauth2-redirect.

    This reads uvicorn's internals, and only here. Its `uvicorn.access` logger logs each request with
    five arguments: client, method, path with query, HTTP version and status."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) == 5 and isinstance(args[2], str):
            record.args = (args[0], args[1], url(args[2]), args[3], args[4])
        return True


ACCESS_LOG = AccessLog()


def mask_access_log() -> None:
    """Install `AccessLog` on uvicorn's access logger. It is there once, because a logger keeps one of each filter."""
    logging.getLogger("uvicorn.access").addFilter(ACCESS_LOG)
