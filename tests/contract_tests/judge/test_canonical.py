"""What a run generated, per part, as one digest (judge/canonical.py, outcome/generation.Generated), and what
keeps generation a function of the seed, the spec and the options (judge/engine.py, judge/hooks.py)."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

from schemathesis.core.parameters import ParameterLocation
from schemathesis.generation.meta import TestPhase

from contract_tests.client.surface import Surface
from contract_tests.identities import Identities
from contract_tests.judge.canonical import CREDENTIAL, FRESH, ORIGIN, Canonical
from contract_tests.judge.engine import Plan, load_schema, probes_of_methods
from contract_tests.judge.hooks import addressing_served
from contract_tests.judge.known import Known
from contract_tests.options import Options
from contract_tests.outcome.findings import Ledger
from contract_tests.outcome.generation import Generated, generated_digest
from contract_tests.spec import Spec
from tests.support.suite import a_run

SPEC = Spec.load()
BASE = "http://127.0.0.1:9/shop/api/v1"


def test_what_differs_between_two_runs_of_a_seed_is_masked_and_nothing_else() -> None:
    identities = Identities()
    number, text = identities.integer({"type": "integer"}), identities.string({"maxLength": 50}, "Éa")
    canonical = Canonical(identities, [BASE], {"X-API-Key": "k"})
    form = {
        "headers": canonical.headers({"Authorization": "Bearer abc", "X-API-Key": "k", "Accept": "text/csv"}),
        "path": {"customernumber": number, "productline": text, "other": str(number)},
        "body": {"state": "null", "creditlimit": 12, "swapped": text.swapcase(), "big": "9" * 5000},
        "url": f"{BASE}/productlines/{text}/?page=2",
    }
    shown = json.loads(canonical(form))
    assert shown["headers"] == {"Authorization": CREDENTIAL, "X-API-Key": CREDENTIAL, "Accept": "text/csv"}
    assert shown["path"] == {"customernumber": FRESH, "productline": FRESH, "other": FRESH}
    assert shown["body"]["state"] == "null" and shown["body"]["creditlimit"] == 12
    assert shown["body"]["swapped"] == "éA" + FRESH  # identifier_variants swaps the case of a made one
    assert shown["url"] == f"{ORIGIN}/shop/api/v1/productlines/Éa{FRESH}/?page=2"
    another = Identities()  # another run: another mark, another start, another order of the counter
    another.integer({"type": "integer"})
    again = Canonical(another, ["http://127.0.0.1:10/shop/api/v1"], {"X-API-Key": "k2"})
    number2, text2 = another.integer({"type": "integer"}), another.string({"maxLength": 50}, "Éa")
    form2 = {
        **form,
        "headers": again.headers({"Authorization": "Bearer xyz", "X-API-Key": "k2", "Accept": "text/csv"}),
        "path": {"customernumber": number2, "productline": text2, "other": str(number2)},
        "body": {**form["body"], "swapped": text2.swapcase()},
        "url": f"http://127.0.0.1:10/shop/api/v1/productlines/{text2}/?page=2",
    }
    assert again(form2) == canonical(form)


def test_a_parts_digest_follows_each_streams_order_not_which_stream_was_recorded_first() -> None:
    first, second = Generated(), Generated()
    for key, case in [("GET /a", "1"), ("GET /b", "x"), ("GET /a", "2")]:
        first.add(key, case)
    for key, case in [("GET /b", "x"), ("GET /a", "1"), ("GET /a", "2")]:
        second.add(key, case)
    assert first.digest() == second.digest() and first.count() == 3
    swapped = Generated()
    for key, case in [("GET /a", "2"), ("GET /a", "1"), ("GET /b", "x")]:
        swapped.add(key, case)
    assert swapped.digest() != first.digest()


def test_a_part_absorbed_keeps_its_record_and_what_was_not_sent() -> None:
    ledger, part = Ledger(), Ledger()
    at = part.generation("backend conformance fuzzing").add("GET /a", "1")
    part.generation("backend conformance fuzzing").unsent("GET /a", at, "not sent: the time budget was spent")
    ledger.absorb(part)
    (record,) = ledger.generated.values()
    assert record.as_json()["not_sent"] == ["GET /a #1: not sent: the time budget was spent"]
    assert generated_digest(ledger.generated) == generated_digest(part.generated)


def test_each_paths_probes_of_undocumented_methods_are_one_operations() -> None:
    (settings,) = probes_of_methods(SPEC, set(SPEC.operations))
    silenced = set(settings["include-operation-id"])
    assert settings["phases"] == {"coverage": {"unexpected-methods": []}}
    for path in {op.path for op in SPEC.operations.values()}:
        on_path = [op.id for op in SPEC.operations.values() if op.path == path]
        assert len([name for name in on_path if name not in silenced]) == 1, path
    assert probes_of_methods(SPEC, {"get_customer"}) == []


def test_a_schema_with_per_operation_settings_still_serves_only_its_operations() -> None:
    surface = Surface("backend", BASE, operations=tuple(SPEC.operations), headers={}, accepted={})
    options = Options(base_url=BASE)
    chosen = {"get_customer", "update_customer", "list_products"}
    schema = load_schema(a_run(SPEC, options, surface), surface, Plan(frozenset(chosen)), Known(Identities()))
    served = {result.ok().label for result in schema.get_all_operations()}
    assert served == {SPEC.operations[name].label for name in chosen}


def case(method: str, phase: TestPhase, negative: bool = False, value: Any = 5) -> Any:
    path = SimpleNamespace(mode=SimpleNamespace(value="negative"))
    meta = SimpleNamespace(
        phase=SimpleNamespace(name=phase), components={ParameterLocation.PATH: path} if negative else {}
    )
    return SimpleNamespace(method=method, meta=meta, path_parameters={"customernumber": value})


def test_fuzzing_addresses_items_served_when_the_run_started_by_the_generated_value() -> None:
    served = {"customernumber": [103, 112, 114]}
    chosen = []
    for value in range(40):
        put = case("PUT", TestPhase.FUZZING, value=value)
        addressing_served(put, served)
        again = case("PUT", TestPhase.FUZZING, value=value)
        addressing_served(again, served)
        assert put.path_parameters == again.path_parameters  # a function of the generated value
        chosen.append(put.path_parameters["customernumber"])
    assert {103, 112, 114} <= set(chosen) and set(chosen) - {103, 112, 114}, "most, not all"
    for untouched in (
        case("DELETE", TestPhase.FUZZING),
        case("PUT", TestPhase.FUZZING, negative=True),
        case("PUT", TestPhase.STATEFUL),
    ):
        addressing_served(untouched, served)
        assert untouched.path_parameters == {"customernumber": 5}


def test_a_number_the_run_made_is_masked_in_a_raw_body_and_no_other() -> None:
    """request_shapes sends bodies as bytes (cut JSON, another media type): a made customer number in
    their text differs from one run to the next as any made identifier does."""
    forms = []
    for _ in range(2):
        identities = Identities()
        number = identities.integer({"type": "integer"})
        body = f'{{"customernumber": {number}, "creditlimit": 1234567890123, "phone": "1000000001"'.encode()
        forms.append(json.loads(Canonical(identities)({"content": body}))["content"]["bytes"])
    assert forms[0] == forms[1]
    assert FRESH in forms[0] and "1234567890123" in forms[0] and "1000000001" in forms[0]
