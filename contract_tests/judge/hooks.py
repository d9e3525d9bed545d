"""Generation hooks: keep "valid" data valid for a correct Django REST Framework backend.

Schemathesis generates from the schemas alone. But a few rules of the contract live in prose, and a
few DRF behaviours are harmless yet would make a positive case fail. Each hook here corrects positive
bodies only and leaves negative ones alone. It runs in every phase: examples (through
`before_add_examples`), coverage, fuzzing and stateful.

- `format: decimal` draws real decimals that match the Money pattern, never "", "-", "." or "-.".
  The coverage phase derives positive cases from the pattern whose decimal field holds no digit, and
  those are dropped.
- Strings lose leading and trailing whitespace, because DRF trims them. A whitespace-only string
  becomes blank.
- A field naming another collection's item, such as a product's `productline`, names one that exists.
- A PUT or PATCH body keeps the identifier of the item in the path, because changing it is a 409.
- In the fuzzing phase, a request addressing an item (other than a DELETE) addresses an item the
  target served when the run started (`Known.items`) three times in four. A random identifier names no
  item, and a write to none is a 404 that judges nothing. The generated value decides whether, and
  which item. It is never an item learnt from an answer during the run, because what others wrote
  meanwhile depends on the timing, and a seed must generate the same (docs/ci-gate.md).
- A create gets an identifier of its own from the run's one allocator (identities.py). The domain
  tests, both surfaces and every worker share it. This matters because a backend may refuse a
  duplicate with 400 (DRF's unique validator), Hypothesis repeats small values, and earlier runs
  leave items behind.
- String identifiers may hold "." and every other character except "/". Schemathesis encodes "." and
  ".." in paths, but most servers decode `%2F` before routing, so a correct backend may refuse "/"
  with 400. `identifier_addressable` judges "/" and each other class of URL-special characters on
  purpose-made items. Such an item must be refused, or served at its path, never created but
  unreachable.
- A field naming something outside this interface (`x-external-reference`) holds a value the target
  already serves, or null when it serves none.
- Form bodies send null as the empty value, which is the contract's form encoding of null. For the
  same reason, a negative form body holding an empty value in a nullable field is dropped. On the
  wire it is a null, not an invalid value.
"""

from __future__ import annotations

import email
import email.policy
import functools
import hashlib
import re
from decimal import Decimal
from typing import Any
from urllib.parse import parse_qsl, quote, unquote

import schemathesis
from hypothesis import strategies as st

from contract_tests.identities import Identities
from contract_tests.judge.known import Known
from contract_tests.schemathesis_seam import FUZZING, generation_mode, negative_at, phase_name, register_hook
from contract_tests.spec import FORM_MEDIA_TYPES, Spec

DIGIT = re.compile(r"\d")
SLASH = "/"  # A backend may refuse it in an identifier (see the module docstring).


def decimal_strategy() -> st.SearchStrategy[str]:
    """Decimals with up to 8 integer and 2 fraction digits, written as the Money pattern allows."""
    amounts = st.decimals(min_value=Decimal("-99999999.99"), max_value=Decimal("99999999.99"), places=2)
    integers = st.integers(min_value=-99999999, max_value=99999999).map(str)
    return st.one_of(amounts.map(lambda value: format(value, "f")), integers)


def register_formats() -> None:
    schemathesis.openapi.format("decimal", decimal_strategy())


@functools.cache
def _decimal_fields(spec: Spec) -> dict[str, set[str]]:
    """Decimal-format body fields by operation label."""
    found: dict[str, set[str]] = {}
    for op in spec.operations.values():
        schema = op.request_schema or {}
        fields = {name for name, prop in schema.get("properties", {}).items() if prop.get("format") == "decimal"}
        found[op.label] = fields
    return found


@functools.cache
def _nullable_fields(spec: Spec) -> dict[str, set[str]]:
    """Nullable body fields by operation label: an empty form value there is a valid null."""
    return {
        op.label: {name for name, prop in _properties(op.request_schema).items() if prop.get("nullable")}
        for op in spec.operations.values()
    }


def _properties(schema: dict[str, Any] | None) -> dict[str, Any]:
    properties: dict[str, Any] = (schema or {}).get("properties", {})
    return properties


def _empty_on_the_wire(value: Any) -> bool:
    """Whether a form field carrying `value` is sent empty (None, "", or a list of such)."""
    if isinstance(value, list):
        return all(_empty_on_the_wire(item) for item in value)
    return value is None or value == ""


def sent_form_fields(content_type: str, body: bytes) -> list[tuple[str, str]]:
    """The (name, value) pairs of a form body as sent, urlencoded or multipart."""
    if content_type.startswith("application/x-www-form-urlencoded"):
        return parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True)
    message = email.message_from_bytes(
        b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + body, policy=email.policy.HTTP
    )
    if not message.is_multipart():
        return []
    fields = []
    for part in message.iter_parts():
        payload = part.get_payload(decode=True)
        text = payload.decode("utf-8", "replace") if isinstance(payload, bytes) else ""
        fields.append((str(part.get_param("name", header="content-disposition") or ""), text))
    return fields


def sends_null_in_a_form(spec: Spec, label: str, content_type: str, body: bytes | None) -> bool:
    """Whether a form request leaves a nullable field empty: a null on the wire, not an invalid value.

    The coverage and stateful phases can turn an invalid value into an empty form field; such a
    request is valid under the contract's form encoding, so refusing it is not required.
    """
    if body is None or not content_type.startswith(FORM_MEDIA_TYPES):
        return False
    nullable = _nullable_fields(spec).get(label, set())
    return any(name in nullable and value == "" for name, value in sent_form_fields(content_type, body))


def _existing_identifiers(spec: Spec, known: Known) -> dict[str, dict[str, Any]]:
    """For each operation label, the reference fields it must fill with an existing item's identifier."""
    return {
        op.label: {field: known.references[field] for field in spec.references(op) if field in known.references}
        for op in spec.operations.values()
    }


def _external_values(spec: Spec, known: Known) -> dict[str, dict[str, Any]]:
    """For each operation label, the external references it must fill with a value the target serves."""
    return {
        op.label: {
            name: known.external_value(name, _properties(op.request_schema)[name])
            for name in spec.external_references(op.request_schema)
        }
        for op in spec.operations.values()
    }


class FreshIdentifiers:
    """Identifiers no other create of this run used (the run's one allocator), within the field's bounds."""

    def __init__(self, spec: Spec, identities: Identities) -> None:
        self._identities = identities
        self._creates = {
            c.create.label: (c.identifier, c.request_schema["properties"][c.identifier]) for c in spec.collections
        }

    def assign(self, label: str, body: dict[str, Any]) -> None:
        if label not in self._creates:
            return
        name, prop = self._creates[label]
        value = body.get(name)
        if prop.get("type") == "integer" or isinstance(value, str):
            body[name] = self._identities.fresh(prop, value)


def addressing_served(case: Any, items: dict[str, list[Any]]) -> None:
    """Make a positive fuzzing case that addresses an item (not a DELETE) address one of `items`, three
    times in four, chosen by the generated value (see the module docstring)."""
    if phase_name(case) != FUZZING or negative_at(case, "path"):
        return
    if case.method.upper() == "DELETE" or not case.path_parameters:
        return
    for name, value in case.path_parameters.items():
        served = items.get(name)
        if not served:
            continue
        drawn = int.from_bytes(hashlib.blake2b(repr(value).encode("utf-8", "backslashreplace")).digest()[:8], "big")
        if drawn % 4:
            chosen = served[(drawn // 4) % len(served)]
            case.path_parameters[name] = quote(chosen, safe="") if isinstance(chosen, str) else chosen


def _is_positive_body(case: Any) -> bool:
    return isinstance(case.body, dict) and not negative_at(case, "body")


def install(schema: Any, spec: Spec, known: Known) -> None:
    """Register the hooks on `schema` only, so other Schemathesis runs in the process are untouched.

    `known` holds identifiers of items that exist on the target, the external values it serves, and
    the run's identifier allocator.
    """
    decimals = _decimal_fields(spec)
    references = _existing_identifiers(spec, known)
    external = _external_values(spec, known)

    nullables = _nullable_fields(spec)
    fresh = FreshIdentifiers(spec, known.identities)
    identifiers = {collection.identifier for collection in spec.collections}

    def filter_case(context: Any, case: Any) -> bool:
        if not isinstance(case.body, dict):
            return True
        if generation_mode(case) == "negative" and case.media_type in FORM_MEDIA_TYPES:
            nullable = nullables.get(case.operation.label, set())
            if any(_empty_on_the_wire(case.body[name]) for name in nullable if name in case.body):
                return False
        if not _is_positive_body(case):
            return True
        fields = decimals.get(case.operation.label, set())
        return all(
            not isinstance(value, str) or DIGIT.search(value) for name, value in case.body.items() if name in fields
        )

    def map_case(context: Any, case: Any) -> Any:
        addressing_served(case, known.items)
        if not _is_positive_body(case):
            return case
        body = dict(case.body)
        for name, value in body.items():
            if isinstance(value, str):
                value = value.strip() or "x"
                body[name] = value.replace(SLASH, "_") if name in identifiers else value
            if value is None and case.media_type in FORM_MEDIA_TYPES:
                body[name] = ""
        for name, value in references.get(case.operation.label, {}).items():
            if isinstance(body.get(name), str):
                body[name] = value
        for name, value in external.get(case.operation.label, {}).items():
            if name in body:
                body[name] = "" if value is None and case.media_type in FORM_MEDIA_TYPES else value
        for name, value in (case.path_parameters or {}).items():
            if name in body:  # the item's own identifier: changing it is a 409 under the contract
                body[name] = unquote(value) if isinstance(value, str) else value
        fresh.assign(case.operation.label, body)
        case.body = body
        return case

    def before_add_examples(context: Any, examples: list[Any]) -> None:
        """The Examples phase builds its cases without the two hooks above: apply them here."""
        examples[:] = [map_case(context, case) for case in examples if filter_case(context, case)]

    register_hook(schema, "filter_case", filter_case)
    register_hook(schema, "map_case", map_case)
    register_hook(schema, "before_add_examples", before_add_examples)
