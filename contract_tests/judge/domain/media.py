"""The body encodings the domain tests send: JSON, urlencoded form and multipart.

This module says how a body goes out in each. A form has no null, so the empty value stands for it. It
says which encodings an operation accepts. It also says what a field sent as a form's empty value may
read back as, which is the spec's decision `empty-form-value`.

The checks that write in every encoding share it (body_encodings, identifier_immutable, patch_locality,
read_back_identical).
"""

from __future__ import annotations

import re
from typing import Any

import httpx

from contract_tests.decisions import EMPTY_FORM_VALUE, admits
from contract_tests.judge.domain.data import Context
from contract_tests.spec import FORM_MEDIA_TYPES, JSON, Collection, Operation

MEDIA_TYPES = ("application/json", *FORM_MEDIA_TYPES)
BOUNDARY = "shop-contract-boundary"
"""The multipart boundary of a body built here rather than by httpx, whose boundaries are random."""


def as_form(body: JSON) -> dict[str, str]:
    """Form fields, with numbers as their decimal text and null as the empty value (the contract's encoding)."""
    return {name: "" if value is None else str(value) for name, value in body.items()}


def encoded(body: dict[str, Any], media_type: str) -> dict[str, Any]:
    """httpx arguments sending `body` as `media_type`."""
    if media_type == "application/json":
        return {"json": body}
    form = as_form(body)
    if media_type == "application/x-www-form-urlencoded":
        return {"data": form}
    return {"files": {name: (None, value) for name, value in form.items()}}


def in_capitals(body: dict[str, Any], media_type: str) -> tuple[bytes, str]:
    """`body` encoded as `media_type`, and its `Content-Type` with the media type in capitals.

    The same body as `encoded` sends, with a fixed multipart boundary: what a seed sends stays the same."""
    declared = f"{media_type}; boundary={BOUNDARY}" if media_type == "multipart/form-data" else media_type
    request = httpx.Request(
        "POST", "http://target.invalid/", headers={"Content-Type": declared}, **encoded(body, media_type)
    )
    kind, semicolon, parameters = request.headers["Content-Type"].partition(";")
    return request.read(), kind.upper() + semicolon + parameters


def repeated(field: str, values: list[Any], media_type: str) -> dict[str, Any]:
    """httpx arguments sending `field` once per value, in that order, in the form `media_type`."""
    texts = [as_form({field: value})[field] for value in values]
    if media_type == "application/x-www-form-urlencoded":
        return {"data": {field: texts}}
    return {"files": [(field, (None, text)) for text in texts]}


def media_types(op: Operation) -> list[str]:
    """The body encodings `op` accepts, of those the suite can send."""
    content = op.definition.get("requestBody", {}).get("content", {})
    return [media for media in MEDIA_TYPES if media in content]


def admitted(ctx: Context, collection: Collection, field: str, value: Any, media: str) -> list[Any]:
    """What `field` may read back as once sent alone as `value`. That is the value itself. For null in a
    form (the empty value), it is each value the spec's decision admits that the field's schema allows."""
    if value is not None or media == "application/json":
        return [value]
    schema = collection.request_schema["properties"][field]
    allowed = [v for v in admits(ctx.spec, EMPTY_FORM_VALUE) if v is None or (v == "" and allows_empty(schema))]
    return allowed or [value]


def allows_empty(schema: JSON) -> bool:
    """Whether the field's schema lets it hold the empty string. A decimal or a date is never empty."""
    return allows_text(schema, "")


def allows_text(schema: JSON, text: str) -> bool:
    """Whether the field's schema lets it hold `text`. It must be a string without a `format`, whose length
    bounds, pattern and enum allow `text`."""
    pattern = schema.get("pattern")
    return (
        schema.get("type") == "string"
        and "format" not in schema
        and schema.get("minLength", 0) <= len(text) <= schema.get("maxLength", len(text))
        and (pattern is None or re.search(pattern, text) is not None)
        and text in schema.get("enum", [text])
    )
