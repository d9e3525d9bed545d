"""A consumer contract read against a spec revision alone: the pull-request gate of a spec change.

The revision is read as the suite reads any spec, then validated whole by openapi-spec-validator
(`load_spec`). Each recorded interaction is then checked against it as what this consumer sends and
reads, not as a general spec diff. The revision must honour all of these:

- The interaction's operation is still there, at the same method and path.
- Every query parameter it sends is still declared, and its recorded value is still valid
  (openapi-schema-validator). No query parameter that it does not send became required.
- Its body's media type is still accepted, and the recorded body is still valid. A field that became
  required or a value narrowed breaks that. Every field it sends is still in the body's schema.
- The security scheme it used still admits it.
- Every status it got as a 2xx is still documented, with every response field it received.

A form's values are text on the wire. So before validation they are read as the spec's decision for
forms says: numbers as their decimal text, and an empty value of a nullable field as null. Verdicts
go to the ledger under the interaction's name, as the check `consumer_revision`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from openapi_schema_validator import OAS30Validator, OAS30WriteValidator
from openapi_spec_validator import validate
from openapi_spec_validator.validation.exceptions import OpenAPIValidationError

from contract_tests.judge.consumer.document import FORM_TYPES, Contract, Interaction
from contract_tests.outcome.findings import Ledger, Violation
from contract_tests.spec import Operation, Spec
from shop_contract.document import SpecError

CHECK = "consumer_revision"
JSON = dict[str, Any]


def load_spec(path: Path | None) -> Spec:
    """The spec at `path`, by default the bundled one, as valid OpenAPI. Otherwise it raises SpecError, one line."""
    spec = Spec.load(path)
    try:
        validate(spec.raw)
    except OpenAPIValidationError as exc:
        where = "/".join(str(part) for part in exc.absolute_path)
        problem = (
            f"fails the OpenAPI {spec.raw.get('openapi')} schema's {exc.validator}"  # Its message quotes the value.
        )
        raise SpecError(f"{path or 'the bundled spec'} is not valid OpenAPI at /{where}: {problem}") from None
    return spec


def check(spec: Spec, contract: Contract, ledger: Ledger, progress: Callable[[str], None]) -> None:
    """Judge each interaction of `contract` against `spec`, as a pass or a violation listing what breaks."""
    run = ledger.consumer
    assert run is not None
    for interaction in contract.interactions:
        progress(f"[consumer] {interaction.name} {interaction.summary()}")
        problems = breaks(spec, interaction)
        recorded = interaction.recorded_status
        if problems:
            rule = "this consumer breaks: " + "; ".join(problems)
            shown = f"the mock answered HTTP {recorded} when it was recorded (spec {contract.recorded_spec})"
            violation = Violation(CHECK, interaction.surface, interaction.name, rule, _recorded(interaction), shown)
            ledger.violated(violation)
        else:
            ledger.passed(interaction.surface, interaction.name, CHECK)
        run.interactions.append(interaction.judged(None, "broken" if problems else "ok", tuple(problems)))


def _recorded(interaction: Interaction) -> str:
    """The recorded example in one line, where a replay would show its curl command."""
    example = interaction.example
    query = "&".join(f"{name}={value}" for name, value in example["query"].items())
    body = "" if example["body"] is None else " " + json.dumps(example["body"], ensure_ascii=False)
    media = f" ({interaction.media_type})" if interaction.media_type else ""
    path = interaction.raw["path"]
    for name, value in example["path"].items():  # Never str.format, because the file is input.
        path = path.replace(f"{{{name}}}", value)
    return f"recorded example: {interaction.raw['method']} {path}{'?' + query if query else ''}{media}{body}"


def breaks(spec: Spec, interaction: Interaction) -> list[str]:
    """What of `interaction` the spec no longer honours, in words. It is empty when nothing."""
    method, path = interaction.raw["method"], interaction.raw["path"]
    op = spec.operations.get(interaction.operation)
    if op is None:
        moved = spec.by_label(f"{method} {path}")
        if moved is None:
            return [f"the operation {interaction.operation} ({method} {path}) was removed"]
        op = moved
    if (op.method.upper(), op.path) != (method, path):
        return [f"the operation {interaction.operation} moved from {method} {path} to {op.label}"]
    return [
        *_parameters(op, interaction),
        *_body(op, interaction),
        *_security(spec, op, interaction),
        *_responses(op, interaction),
    ]


def _parameters(op: Operation, interaction: Interaction) -> Iterable[str]:
    params = [*op.path_item.get("parameters", []), *op.definition.get("parameters", [])]
    query = {param["name"]: param for param in params if param.get("in") == "query"}
    sent = interaction.request["query_parameters"]
    for name in sent:
        if name not in query:
            yield f"the query parameter {name} was removed"
            continue
        value = interaction.example["query"].get(name)
        schema = query[name].get("schema", {})
        if value is not None:
            for error in OAS30Validator(schema).iter_errors(_read(value, schema)):
                yield f"the query parameter {name}={value!r} is no longer valid: {error.message}"
    for name, param in sorted(query.items()):
        if param.get("required") and name not in sent:
            yield f"the query parameter {name} became required, and this consumer does not send it"


def _body(op: Operation, interaction: Interaction) -> Iterable[str]:
    request_body = op.definition.get("requestBody")
    media_type, body = interaction.media_type, interaction.example["body"]
    if media_type is None:
        if request_body and request_body.get("required"):
            yield "a request body became required, and this consumer sends none"
        return
    content = (request_body or {}).get("content", {})
    if media_type not in content:
        yield f"a body in {media_type} is no longer accepted"
        return
    schema = content[media_type].get("schema", {})
    if not isinstance(body, dict):
        return
    properties = schema.get("properties")
    if properties is not None:
        for name in interaction.request["body_fields"]:
            if name not in properties:
                yield f"the body field {name} was removed from the spec (a backend may ignore it)"
    if media_type in FORM_TYPES:
        body = {name: _read(value, (properties or {}).get(name, {})) for name, value in body.items()}
    for error in sorted(OAS30WriteValidator(schema).iter_errors(body), key=lambda e: list(e.absolute_path)):
        if error.validator == "required":
            missing = [name for name in error.validator_value if name not in body]
            yield f"the body field {', '.join(missing)} became required, and this consumer does not send it"
        else:
            where = "/".join(str(part) for part in error.absolute_path) or "(body)"
            yield f"the body field {where} as this consumer sends it is no longer valid: {error.message}"


def _security(spec: Spec, op: Operation, interaction: Interaction) -> Iterable[str]:
    requirements = op.definition.get("security", spec.raw.get("security", []))
    if not requirements:
        return
    used = set(interaction.request["auth"])
    statuses = {int(status) for status in interaction.raw["responses"]}
    if not used and not any(200 <= status < 300 for status in statuses):
        return  # It was refused for want of credentials already.
    if not any(set(requirement) <= used for requirement in requirements):
        schemes = " or ".join(" + ".join(sorted(requirement)) or "none" for requirement in requirements)
        yield f"its credentials ({' + '.join(sorted(used)) or 'none'}) are no longer admitted: {schemes}"


def _responses(op: Operation, interaction: Interaction) -> Iterable[str]:
    responses = op.definition.get("responses", {})
    for status in sorted(int(code) for code in interaction.raw["responses"]):
        if status // 100 != 2:
            continue
        answer = responses.get(str(status)) or responses.get(f"{status // 100}XX") or responses.get("default")
        if answer is None:
            yield f"HTTP {status}, which this consumer was answered, is no longer documented"
            continue
        content = answer.get("content", {})
        media = next((value for name, value in content.items() if "json" in name), None)
        fields = interaction.fields_received(status)
        if media is None:
            if fields:
                yield f"HTTP {status} no longer has a JSON body, whose fields this consumer received"
            continue
        for name in fields:
            if not has_field(media.get("schema", {}), name):
                yield f"the response field {name} of HTTP {status} was removed"


def has_field(schema: JSON, path: str) -> bool:
    """Whether `schema`, dereferenced, can hold the field at `path`, such as `results[].productline`.

    A free-form object, one with no `properties`, holds any field."""
    steps: list[str] = []
    for part in path.split("."):
        name, _, lists = part.partition("[]")
        steps.append(name)
        steps += ["[]"] * (1 + lists.count("[]")) if part.endswith("[]") else []
    node: JSON | None = schema
    for step in steps:
        node = _merged(node or {})
        if step == "[]":
            node = node.get("items", {})
            continue
        properties = node.get("properties")
        if properties is None:
            return node.get("additionalProperties", True) is not False
        if step not in properties:
            extra = node.get("additionalProperties")
            return isinstance(extra, dict)
        node = properties[step]
    return True


def _merged(schema: JSON) -> JSON:
    """An `allOf`'s parts as one schema, with their properties together. That is enough to look a field up."""
    if "allOf" not in schema:
        return schema
    merged: JSON = {key: value for key, value in schema.items() if key != "allOf"}
    for part in schema["allOf"]:
        part = _merged(part)
        merged["properties"] = {**merged.get("properties", {}), **part.get("properties", {})}
    return merged


def _read(value: Any, schema: JSON) -> Any:
    """A value sent as text (a query, a form), read as the spec's type.

    The empty value of a nullable field is null. Numbers and booleans are read from their text."""
    if not isinstance(value, str):
        return value
    if value == "" and schema.get("nullable"):
        return None
    kind = schema.get("type")
    try:
        if kind == "integer":
            return int(value)
        if kind == "number":
            return float(value)
    except ValueError:
        return value
    if kind == "boolean" and value in ("true", "false"):
        return value == "true"
    return value
