"""One answer judged again by the Schemathesis check that found a violation (`shop-contract replay`).

The check is the one a run registered, Schemathesis' own or this suite's in `checks.py`. It runs on a
Case rebuilt from the request as sent: its operation, path parameters, query, headers and body.

Some checks judge more than the request and its answer. They read what the generator meant to send or
a stateful chain's history, or they send a request of their own. They cannot be re-judged on one
answer, so they are `NEEDS_CONTEXT`.
"""

from __future__ import annotations

import json
import re
from functools import cache
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import httpx
import requests
import schemathesis

from contract_tests.judge import checks as _registered_checks  # noqa: F401  (registers our checks)
from contract_tests.judge import hooks
from contract_tests.outcome import standalone
from contract_tests.schemathesis_seam import CHECKS, NOT_SET, FailureGroup, load_all_checks
from contract_tests.spec import Operation, Spec

NEEDS_CONTEXT = frozenset(
    {
        "positive_data_acceptance",
        "negative_data_rejection",
        "missing_required_header",
        "unsupported_method",
        "use_after_free",
        "ensure_resource_availability",
        "ignored_auth",
        "external_reference_accepted",
    }
)
"""Schemathesis checks that read the generation's context, such as the case's metadata or the scenario's
history, or that send requests of their own. One answer does not decide them."""


def judges_one_answer(check: str) -> bool:
    """Whether `check` is a registered Schemathesis check that one request and its answer decide."""
    load_all_checks()  # Schemathesis registers its own checks only when first needed.
    return check in CHECKS.get_all_names() and check not in NEEDS_CONTEXT


@cache
def _schema(spec: Spec) -> Any:
    hooks.register_formats()
    return schemathesis.openapi.from_dict(spec.raw)


def path_parameters(op: Operation, base_url: str, url: str) -> dict[str, str] | None:
    """The values `url` gives `op`'s path parameters, or None when `url` is not `op`'s path under `base_url`."""
    pattern = re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>[^/]+)", re.escape(op.path))
    path = urlsplit(url).path
    base = urlsplit(base_url).path.rstrip("/")
    found = re.fullmatch(pattern, path[len(base) :]) if path.startswith(base) else None
    return None if found is None else {name: unquote(value) for name, value in found.groupdict().items()}


def _body(request: standalone.Request) -> Any:
    """The body as the Case had it. That is a JSON document, form fields, or the text sent."""
    body = request.get("body")
    if body is None:
        return NOT_SET
    if standalone.media_type(request["headers"]) in standalone.FORMS:
        return standalone.fields(request)
    try:
        return json.loads(body)
    except ValueError:
        return body


def broken(
    spec: Spec, op: Operation, check: str, base_url: str, request: standalone.Request, response: httpx.Response
) -> str | None:
    """The rule `check` finds broken in `response` to `request`, or None. The request went to `op` under `base_url`."""
    operation = _schema(spec).find_operation_by_id(op.id)
    query = {
        name: values[0] if len(values) == 1 else values
        for name, values in parse_qs(urlsplit(request["url"]).query).items()
    }
    case = operation.Case(
        method=request["method"],
        path_parameters=path_parameters(op, base_url, request["url"]) or {},
        query=query,
        headers={name: value for name, value in request["headers"] if name.lower() != "content-type"},
        body=_body(request),
        media_type=standalone.media_type(request["headers"]) or None,
    )
    try:
        case.validate_response(_as_schemathesis(response), checks=CHECKS.get_by_names([check]))
    except FailureGroup as group:
        return "; ".join(f"{failure.title}: {failure.message}".strip() for failure in group.exceptions)
    return None


def _as_schemathesis(response: httpx.Response) -> schemathesis.Response:
    """`response` as Schemathesis holds one. Its own conversion of an httpx answer adds the URL's query to
    the request a second time (`page_size=2&page_size=2`). The page checks read that as no valid page."""
    sent = response.request
    prepared = requests.Request(sent.method, str(sent.url), headers=dict(sent.headers), data=sent.content).prepare()
    return schemathesis.Response(
        status_code=response.status_code,
        headers={name: response.headers.get_list(name) for name in response.headers},
        content=response.content,
        request=prepared,
        elapsed=0.0,  # A bounded client's answer is rebuilt from its body, so it has no timing. No check reads it here.
        verify=True,
        message=response.reason_phrase,
        http_version=response.http_version,
        encoding=response.encoding,
    )
