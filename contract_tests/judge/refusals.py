"""Refusals the contract admits, told from defects.

A field marked `x-external-reference` names something this interface does not define, such as an
employee. A backend may refuse a value it does not know, and that is not a defect of the contract's
surface. So a 400 whose body names only such fields is excused by default. The strict check
`external_reference_accepted` reports it.

A server bounds the request line it reads (gunicorn at 4094 bytes, nginx at 8 KB). A 414 to a generated
query longer than the spec's decision `long-request-line` admits is the deployment's refusal, not a
defect. A 414 to a shorter line is judged as any status the operation does not declare.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

from contract_tests.decisions import admits
from contract_tests.spec import Spec

STRICT = "external_reference_accepted"
LONG_REQUEST_LINE = "long-request-line"
URI_TOO_LONG = 414


def named_fields(body: Any) -> set[str]:
    """Fields a 400 body names, in problem+json `errors[].field` or in DRF's `{field: [messages]}`."""
    if not isinstance(body, dict):
        return set()
    errors = body.get("errors")
    if isinstance(errors, list):
        return {str(error["field"]) for error in errors if isinstance(error, dict) and "field" in error}
    return {name for name, value in body.items() if isinstance(value, list) and name != "non_field_errors"}


def names_only_external(spec: Spec, label: str, status: int, content: bytes) -> bool:
    """Whether a 400 to the operation `label` names only fields that reference outside the interface."""
    op = spec.by_label(label)
    if status != 400 or op is None:
        return False
    external = set(spec.external_references(op.request_schema))
    try:
        fields = named_fields(json.loads(content))
    except (ValueError, RecursionError):  # RecursionError means a body nested too deep to parse.
        return False
    return bool(fields) and fields <= external


def request_line_too_long(spec: Spec, method: str, uri: str, status: int) -> bool:
    """Whether `status` is a 414 to a request line (`METHOD target HTTP/1.1`) longer than the spec admits."""
    bound = admits(spec, LONG_REQUEST_LINE)
    if status != URI_TOO_LONG or not bound:
        return False
    parts = urlsplit(uri)
    target = parts.path + (f"?{parts.query}" if parts.query else "")
    return len(f"{method} {target} HTTP/1.1".encode()) > int(bound[0])
