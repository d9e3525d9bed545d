"""Broken variants for the request-shape clauses (issue 40): a malformed body completed, a 401 without
its challenge, a word in an integer path parameter answered 500, a body read as JSON whatever its declared
media type or none, and a media type in capitals answered 500. Each breaks one clause and nothing else;
`clause_variants.CLAUSE_VARIANTS` holds them.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from tests.support.faults import Answer, Scope, header
from tests.support.variants import API, LINE, Variant, fault

LINES = f"{API}/productlines/"


def repair_cut_json(scope: Scope, body: bytes) -> bytes:
    """A lenient JSON parser: a body cut before its closing brace is completed, not refused."""
    try:
        json.loads(body)
    except ValueError:
        if body.startswith(b"{") and not body.endswith(b"}"):
            return body + b"}"
    return body


def without_challenge(scope: Scope, answer: Answer) -> Answer:
    """A 401 from an authenticator that sets no `WWW-Authenticate` (DRF answers 403 there; this one 401)."""
    status, headers, body = answer
    return status, {k: v for k, v in headers.items() if k.lower() != "www-authenticate"}, body


def word_in_path_is_500(scope: Scope, answer: Answer) -> Answer:
    """A customer number converted with `int()` unguarded: a word or a fraction in the path is a 500."""
    if scope["path"].rstrip("/").rpartition("/")[2].isdigit():
        return answer
    return 500, {"content-type": "text/html"}, b"<h1>ValueError: invalid literal for int()</h1>"


def capitals_are_500(scope: Scope, answer: Answer) -> Answer:
    """A framework that parses a body as JSON only when its media type is in lower case (Connexion): it
    hands the handler the bytes of an `APPLICATION/JSON` body, which fail there."""
    declared = header(scope, "content-type").partition(";")[0]
    if declared == declared.lower():
        return answer
    return 500, {"content-type": "text/html"}, b"<h1>TypeError: a bytes-like object is required</h1>"


def read_as_json(when: Callable[[str], bool]) -> Callable[[Scope, bytes], bytes]:
    """A parser that reads a body as JSON whatever its declared `Content-Type`, where `when(declared)`."""

    def rewrite(scope: Scope, body: bytes) -> bytes:
        if when(header(scope, "content-type")):
            kept = [(k, v) for k, v in scope["headers"] if k.lower() != b"content-type"]
            scope["headers"] = [*kept, (b"content-type", b"application/json")]
        return body

    return rewrite


SHAPE_VARIANTS = [
    Variant(
        "cut_json_body_completed",
        "request_shapes",
        ("create_product_line",),
        "domain",
        fault("POST", LINES, request=repair_cut_json),
        clauses=("validation-failure/malformed-body",),
    ),
    Variant(
        "unauthorized_without_challenge",
        "auth_matrix",
        ("get_product_line",),
        "domain",
        fault("GET", LINE, response=without_challenge),
        clauses=("credentials/challenge",),
    ),
    Variant(
        "word_as_customer_number_is_500",
        "request_shapes",
        ("get_customer",),
        "domain",
        fault("GET", rf"{API}/customers/[^/]+/", response=word_in_path_is_500),
        clauses=("unknown-resource/not-of-its-type",),
    ),
    Variant(
        "capital_media_type_is_500",
        "body_encodings",
        ("create_product_line",),
        "domain",
        fault("POST", LINES, response=capitals_are_500),
        clauses=("media-type-case/read-alike",),
    ),
    Variant(
        "text_plain_read_as_json",
        "request_shapes",
        ("create_product_line",),
        "domain",
        fault("POST", LINES, request=read_as_json(lambda declared: declared.startswith("text/plain"))),
        clauses=("unsupported-media-type/refused",),
    ),
    Variant(
        "no_content_type_read_as_json",
        "request_shapes",
        ("create_product_line",),
        "domain",
        fault("POST", LINES, request=read_as_json(lambda declared: not declared)),
        clauses=("missing-content-type/refused",),
    ),
]
