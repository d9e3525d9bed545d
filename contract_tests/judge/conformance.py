"""The Schemathesis part of a run: every phase (examples, coverage, fuzzing, stateful) on one surface.

The configuration is built here in code, never discovered from a `schemathesis.toml`, so a run does
not depend on the directory it starts from. The engine's events become entries of the shared ledger.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

import hypothesis
import requests
import schemathesis
from schemathesis.config import ProjectConfig
from schemathesis.core import NotSet
from schemathesis.engine import Status, events, from_schema
from schemathesis.engine.recorder import CheckFailureInfo, ScenarioRecorder

from contract_tests.check_names import ALL_CHECKS, STRICT_CHECKS
from contract_tests.client.bounded import Limits, ResponseTooLarge, Trust
from contract_tests.client.bounded_requests import bounded_session
from contract_tests.client.causes import chain, classify, request_of
from contract_tests.client.keyring import CredentialsLost, Keyring
from contract_tests.client.pacing import BudgetSpent
from contract_tests.client.surface import Surface
from contract_tests.judge import checks as _registered_checks  # noqa: F401  (registers our checks)
from contract_tests.judge import deserializer as _registered_deserializer  # noqa: F401  (deep JSON is malformed JSON)
from contract_tests.judge import hooks, refusals
from contract_tests.options import Options
from contract_tests.outcome.coverage import Sent
from contract_tests.outcome.findings import Ledger, RunError, Violation, describe_response
from contract_tests.sharding import collection_name, collection_operations
from contract_tests.spec import Spec

if TYPE_CHECKING:
    from contract_tests.judge.known import Known

Progress = Callable[[str], None]


class ConformanceError(Exception):
    """Schemathesis could not run at all (e.g. the schema could not be processed)."""


def schemathesis_config(options: Options, surface: Surface, stateful: bool, stateless: bool = True) -> dict[str, Any]:
    """The run's configuration, as a `schemathesis.toml` would hold it; `stateless`: the examples,
    coverage and fuzzing phases, `stateful`: the stateful phase."""
    strict = options.enabled_strict
    return {
        "seed": options.seed_value,
        "workers": options.workers or 1,
        "base-url": surface.base_url,
        "headers": surface.headers,
        "request-timeout": options.request_timeout,
        "tls-verify": Trust(options.ca_bundle, options.insecure).verify(),  # its reproductions say `curl -k`
        "cache": {"enabled": False},
        "generation": {
            "max-examples": options.examples,
            "allow-x00": False,
            "codec": "utf-8",
            "with-security-parameters": False,
            "database": "none",
        },
        "checks": {
            "object_level_authorization": {"enabled": False},
            **{name: {"enabled": options.selects(name)} for name in ALL_CHECKS if name not in STRICT_CHECKS},
            **{name: {"enabled": name in strict} for name in STRICT_CHECKS},
        },
        "phases": {
            "examples": {"enabled": stateless},
            "fuzzing": {"enabled": stateless},
            "coverage": {"enabled": stateless and options.coverage_phase},
            "stateful": {"enabled": stateful, "max-steps": options.stateful_steps},
        },
    }


def has_links(spec: Spec, operations: AbstractSet[str]) -> bool:
    """Whether the stateful phase has a link to follow among `operations`."""
    return any(
        collection.create.id in operations and link["operationId"] in operations
        for collection in spec.collections
        for link in collection.create.links.values()
    )


class UntargetedProject(ProjectConfig):
    """Schemathesis' project settings without Hypothesis' target phase.

    Schemathesis asks Hypothesis to maximise each operation's share of 2xx answers. Below 1,000
    examples Hypothesis then runs one hill-climbing pass with no call budget, and where 2xx answers
    stay rare (a DELETE of a string identifier) that pass took 9-27 s of a 30-60 s run, from one run
    to the next with the same seed (benchmarks/README.md). A gate must take predictable time; the
    hooks already steer identifiers to existing items, which is what the climbing looked for.
    """

    __slots__ = ()

    def get_hypothesis_settings(self, *args: Any, **kwargs: Any) -> hypothesis.settings:
        settings = super().get_hypothesis_settings(*args, **kwargs)
        phases = [phase for phase in settings.phases if phase is not hypothesis.Phase.target]
        return hypothesis.settings(settings, phases=phases)


class BoundedTransport:
    """Schemathesis' requests transport, sending through a session bounded in time and size
    (`contract_tests.client.bounded`) with the keyring's current credentials."""

    def __init__(self, inner: Any, limits: Limits, keyring: Keyring | None, expected: dict[str, str]) -> None:
        self._inner = inner
        self._bounded = {"limits": limits, "keyring": keyring, "expected": expected}
        self._fallback = requests.Session()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def send(self, case: Any, *, session: requests.Session | None = None, **kwargs: Any) -> Any:
        bounded = bounded_session(session or self._fallback, **self._bounded)  # type: ignore[arg-type]
        return self._inner.send(case, session=bounded, **kwargs)


def bound(schema: Any, transport: BoundedTransport) -> None:
    """Make every request of `schema` (and of its clones) go through `transport`.

    Schemathesis picks the transport from the schema (`schema.transport`, a property); a subclass made
    for this run answers ours instead, the schema's data unchanged (the same trick as UntargetedProject).
    """
    schema.__class__ = type("BoundedSchema", (type(schema),), {"transport": property(lambda _: transport)})


def load_schema(
    spec: Spec,
    options: Options,
    surface: Surface,
    operations: set[str],
    known: Known,
    limits: Limits,
    keyring: Keyring | None = None,
    *,
    stateful: bool = True,
    stateless: bool = True,
) -> Any:
    linked = stateful and has_links(spec, operations)
    config = schemathesis.Config.from_dict(schemathesis_config(options, surface, linked, stateless))
    schema = schemathesis.openapi.from_dict(spec.raw, config=config).include(operation_id=sorted(operations))
    schema.config.__class__ = UntargetedProject  # same slots; only the settings method differs
    bound(schema, BoundedTransport(schema.transport, limits, keyring, surface.headers))
    hooks.register_formats()
    hooks.install(schema, spec, known)
    return schema


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
    """A 400 to a body that renames the item in its path: the contract makes that an error (409), so a
    400 is a refusal too, not valid data rejected."""
    response = interaction.response
    if response is None or response.status_code != 400 or not isinstance(case.body, dict):
        return False
    return any(
        name in case.body and str(case.body[name]) != unquote(str(value))
        for name, value in (case.path_parameters or {}).items()
    )


def excused(name: str, spec: Spec, case: Any, interaction: Any) -> bool:
    """Failures the contract's own rules make harmless (see the two predicates)."""
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
    """A Schemathesis response's headers back to the bytes they came as: http.client (under requests)
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


@dataclass(frozen=True)
class Plan:
    """One run of Schemathesis' engine: these operations, with the stateless phases, the stateful one, or both."""

    operations: frozenset[str]
    stateless: bool = True
    stateful: bool = True


def plans(spec: Spec, options: Options, surface: Surface, apart: bool = False) -> list[Plan]:
    """The engine runs that test `surface`: one with every phase; on a shard (sharding.py), or `apart` (to run
    side by side), the stateless phases on the operations and the stateful phase per collection, whose
    links stay within it."""
    operations = frozenset(op for op in surface.operations if not options.include or op in options.include)
    if options.part.whole and not apart:
        return [Plan(operations)] if operations else []
    mine = operations & options.part.operations(spec)
    found = [Plan(mine, stateful=False)] if mine else []
    for collection in spec.collections:
        linked = operations & collection_operations(collection)
        if collection_name(collection) in options.part.collections(spec) and has_links(spec, linked):
            found.append(Plan(linked, stateless=False))
    return found


def run(
    spec: Spec,
    options: Options,
    surface: Surface,
    known: Known,
    ledger: Ledger,
    progress: Progress,
    limits: Limits,
    keyring: Keyring | None = None,
    plan: Plan | None = None,
) -> None:
    """Run `plan` (by default, every plan of `surface` in turn, see `plans`), its requests through `limits`
    (the run's bounds, pacer and budget: `client.target.limits_of`)."""
    for each in [plan] if plan is not None else plans(spec, options, surface):
        schema = load_schema(
            spec, options, surface, set(each.operations), known, limits, keyring,
            stateful=each.stateful, stateless=each.stateless,
        )  # fmt: skip
        execute(spec, options, surface, ledger, progress, schema, limits)


def execute(
    spec: Spec,
    options: Options,
    surface: Surface,
    ledger: Ledger,
    progress: Progress,
    schema: Any,
    limits: Limits | None = None,
) -> None:
    """Run the phases `schema` is configured for, its events into the ledger; once the run's time budget
    is spent, the engine is stopped and what it did not reach is listed in `ledger.unreached`."""
    pacer = limits.pacer if limits is not None else None
    stream = from_schema(schema).execute()
    phase, stopped = "", False
    for event in stream:
        if pacer is not None and pacer.spent and not stopped:
            stream.stop()
            stopped = True
            left = f"the rest of the {phase} phase and the phases after it" if phase else "every phase"
            ledger.unreached.append(f"[{surface.name}] schemathesis: {left}")
        if isinstance(event, events.PhaseStarted):
            phase = event.phase.name.value
            progress(f"[{surface.name}] {phase} phase")
        elif isinstance(event, events.ScenarioFinished):
            record(spec, surface, event.recorder, ledger, options.enabled_strict)
            if event.label:
                op = spec.by_label(event.label)
                ledger.run.spent(surface.name, op.id if op is not None else event.label, event.elapsed_time)
            if event.label and event.status != Status.SKIP:
                progress(f"[{surface.name}]   {event.label}: {event.status.value}")
        elif isinstance(event, events.NonFatalError):
            if _cause(event.value, BudgetSpent) is None:
                non_fatal(spec, options, surface, event, ledger)
        elif isinstance(event, events.FatalError):
            if isinstance(event.exception, CredentialsLost):
                raise event.exception
            raise ConformanceError(f"Schemathesis stopped: {event.exception}") from event.exception


def _cause(error: BaseException, kind: type[BaseException]) -> BaseException | None:
    """`error` or the first exception of that `kind` it wraps."""
    return next((item for item in chain(error) if isinstance(item, kind)), None)


def non_fatal(spec: Spec, options: Options, surface: Surface, event: events.NonFatalError, ledger: Ledger) -> None:
    """A request that got no answer to judge: a violation when the answer was too slow or too large."""
    lost = _cause(event.value, CredentialsLost)
    if lost is not None:
        raise lost
    op = spec.by_label(event.label)
    operation = op.id if op is not None else event.label
    sample = event.info.code_sample or ""
    too_large = _cause(event.value, ResponseTooLarge)
    if too_large is not None:
        rule = f"an answer is at most {options.max_response_size} bytes, decompressed (--max-response-size)"
        ledger.violated(Violation("response_size", surface.name, operation, rule, sample, str(too_large)))
    elif _cause(event.value, requests.Timeout) is not None:
        rule = f"an answer comes whole within {options.request_timeout:g} s (connect, headers and body)"
        shown = "(no whole answer within the deadline)"
        ledger.violated(Violation("response_time", surface.name, operation, rule, sample, shown))
    else:
        detail = f"{event.info.title}: {event.info.message}"
        ledger.errors.append(RunError(classify(event.value), surface.name, operation, _request(event, surface), detail))


def _request(event: events.NonFatalError, surface: Surface) -> str:
    """The request the error happened on: the one its exception names, else its operation on the surface
    ("GET /productlines/{productline}/" as "GET {base_url}/productlines/{productline}/"); "" for none."""
    named = request_of(event.value)
    method, _, path = event.label.partition(" ")
    if named or not path.startswith("/"):
        return named
    return f"{method} {surface.base_url.rstrip('/')}{path}"
