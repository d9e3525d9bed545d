"""What Schemathesis' engine found on a surface, as the ledger's entries.

- Each check it ran passed or violated. A violation keeps the failing request and the scenario's
  earlier steps.
- The requests it sent go into the coverage.
- A request that got no answer becomes a `response_time` or `response_size` violation, or a run error
  with its cause.

Failures the contract's own rules make harmless are passes (`excused`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote

import requests

from contract_tests.client.bounded import ResponseTooLarge
from contract_tests.client.causes import chain, classify, request_of
from contract_tests.client.keyring import CredentialsLost
from contract_tests.client.surface import Surface
from contract_tests.judge import hooks, refusals
from contract_tests.options import Options
from contract_tests.outcome.coverage import Sent
from contract_tests.outcome.findings import Ledger, RunError, Violation, describe_response
from contract_tests.schemathesis_seam import CheckFailureInfo, NotSet, ScenarioRecorder, Status, events
from contract_tests.spec import Spec


def _operation_id(spec: Spec, recorder: ScenarioRecorder, case_id: str) -> str:
    label = recorder.cases[case_id].value.operation.label
    op = spec.by_label(label)
    return op.id if op is not None else label


def _form_null(spec: Spec, label: str, interaction: Any) -> bool:
    """A negative case that reached the wire as a form null (see hooks.sends_null_in_a_form)."""
    request = interaction.request
    content_type = next(iter(request.headers.get("Content-Type", [])), "")
    return hooks.sends_null_in_a_form(spec, label, content_type, request.body)


def _refuses_identifier_change(case: Any, interaction: Any) -> bool:
    """A 400 to a body that renames the item in its path. The contract makes that an error (409), so a
    400 is a refusal too, not valid data rejected."""
    response = interaction.response
    if response is None or response.status_code != 400 or not isinstance(case.body, dict):
        return False
    return any(
        name in case.body and str(case.body[name]) != unquote(str(value))
        for name, value in (case.path_parameters or {}).items()
    )


def excused(name: str, spec: Spec, case: Any, interaction: Any) -> bool:
    """Failures the contract's own rules make harmless. They are a 414 to a request line past the admitted
    length (refusals.py), and the two predicates above."""
    request, response = interaction.request, interaction.response
    if response is not None and refusals.request_line_too_long(spec, request.method, request.uri, response.status_code):
        return True
    if name == "negative_data_rejection":
        return _form_null(spec, case.operation.label, interaction)
    if name == "positive_data_acceptance":
        return _refuses_identifier_change(case, interaction)
    return False


def _refuses_external(spec: Spec, case: Any, interaction: Any) -> bool:
    """A 400 naming only fields that reference outside the interface (see refusals.py)."""
    response = interaction.response if interaction is not None else None
    if case is None or response is None:
        return False
    return refusals.names_only_external(spec, case.operation.label, response.status_code, response.content)


def record(
    spec: Spec, surface: Surface, recorder: ScenarioRecorder, ledger: Ledger, strict: frozenset[str] = frozenset()
) -> None:
    """Count every check Schemathesis ran in a scenario, and keep each failure with its evidence."""
    covered(spec, surface, recorder, ledger)
    for case_id, nodes in recorder.checks.items():
        if case_id not in recorder.cases:
            continue
        operation = _operation_id(spec, recorder, case_id)
        for node in nodes:
            if node.status == Status.SUCCESS:
                ledger.passed(surface.name, operation, node.name)
            elif node.status == Status.FAILURE and node.failure_info is not None:
                failure = node.failure_info.failure
                failed_id = failure.case_id or case_id
                interaction = recorder.interactions.get(failed_id)
                case = recorder.cases[failed_id].value if failed_id in recorder.cases else None
                check = node.name
                if case is not None and interaction is not None and excused(node.name, spec, case, interaction):
                    ledger.passed(surface.name, operation, node.name)
                    continue
                if node.name == "positive_data_acceptance" and _refuses_external(spec, case, interaction):
                    if refusals.STRICT not in strict:
                        ledger.passed(surface.name, operation, node.name)
                        continue
                    check = refusals.STRICT
                response = interaction.response if interaction is not None else None
                shown = (
                    describe_response(response.status_code, latin1_headers(response.headers), response.content)
                    if response is not None
                    else "(no response)"
                )
                rule = f"{failure.title}: {failure.message}".strip()
                sample, setup = _reproduction(node.failure_info, failed_id)
                ledger.violated(Violation(check, surface.name, operation, rule, sample, shown, setup))


def latin1_headers(headers: Mapping[str, list[str]]) -> list[tuple[bytes, bytes]]:
    """A Schemathesis response's headers back to the bytes they came as. http.client, under requests,
    decodes every header line as latin-1, which encodes back byte for byte."""
    return [
        (name.encode("latin-1", "backslashreplace"), value.encode("latin-1", "backslashreplace"))
        for name, values in headers.items()
        for value in values
    ]


def covered(spec: Spec, surface: Surface, recorder: ScenarioRecorder, ledger: Ledger) -> None:
    """Each request of a scenario, and each response a check judged, into the run's coverage."""
    for case_id, interaction in recorder.interactions.items():
        if case_id not in recorder.cases:
            continue
        operation = _operation_id(spec, recorder, case_id)
        response = interaction.response
        status = None if response is None else response.status_code
        ledger.coverage.sent(surface.name, operation, status, sent(recorder.cases[case_id].value))
        if response is not None and recorder.checks.get(case_id):
            ledger.coverage.judged(surface.name, operation)


def sent(case: Any) -> Sent:
    """What a Schemathesis case exercises: its parameters, top-level body fields and media type."""
    located = {"path": case.path_parameters, "query": case.query, "header": case.headers, "cookie": case.cookies}
    parameters = frozenset(f"{where}:{name}" for where, values in located.items() for name in values or {})
    has_body = not isinstance(case.body, NotSet)
    fields = frozenset(map(str, case.body)) if isinstance(case.body, dict) else frozenset()
    return Sent(parameters, fields, case.media_type if has_body else None)


def _reproduction(info: CheckFailureInfo, failed_id: str) -> tuple[str, tuple[str, ...]]:
    """The failing request, and the requests before it in its scenario (a stateful chain's earlier steps)."""
    failing = [step.curl for step in info.steps if step.case_id == failed_id]
    if not failing:
        return info.code_sample, ()
    return failing[-1], tuple(step.curl for step in info.steps if step.case_id != failed_id)


def cause(error: BaseException, kind: type[BaseException]) -> BaseException | None:
    """`error` or the first exception of that `kind` it wraps."""
    return next((item for item in chain(error) if isinstance(item, kind)), None)


def non_fatal(spec: Spec, options: Options, surface: Surface, event: events.NonFatalError, ledger: Ledger) -> None:
    """A request that got no answer to judge. It is a violation when the answer was too slow or too large."""
    lost = cause(event.value, CredentialsLost)
    if lost is not None:
        raise lost
    op = spec.by_label(event.label)
    operation = op.id if op is not None else event.label
    sample = event.info.code_sample or ""
    too_large = cause(event.value, ResponseTooLarge)
    if too_large is not None:
        rule = f"an answer is at most {options.max_response_size} bytes, decompressed (--max-response-size)"
        ledger.violated(Violation("response_size", surface.name, operation, rule, sample, str(too_large)))
    elif cause(event.value, requests.Timeout) is not None:
        rule = f"an answer comes whole within {options.request_timeout:g} s (connect, headers and body)"
        shown = "(no whole answer within the deadline)"
        ledger.violated(Violation("response_time", surface.name, operation, rule, sample, shown))
    else:
        detail = f"{event.info.title}: {event.info.message}"
        ledger.errors.append(RunError(classify(event.value), surface.name, operation, _request(event, surface), detail))


def _request(event: events.NonFatalError, surface: Surface) -> str:
    """The request the error happened on, or "" for none. That is the one its exception names, else its
    operation on the surface ("GET /productlines/{productline}/" as "GET {base_url}/productlines/{productline}/")."""
    named = request_of(event.value)
    method, _, path = event.label.partition(" ")
    if named or not path.startswith("/"):
        return named
    return f"{method} {surface.base_url.rstrip('/')}{path}"
