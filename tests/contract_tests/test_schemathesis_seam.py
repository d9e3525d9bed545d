"""Every Schemathesis internal that contract_tests/schemathesis_seam.py relies on, pinned: each name is still
where the seam imports it, each field and member the suite reads is still there, the functions still take
the parameters the suite calls them with, and each class swap still does what it claims. A Schemathesis
release that moves or changes one fails here, one line for each, before a run misbehaves."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import hypothesis
import pytest
import schemathesis
from hypothesis.internal import charmap, lambda_sources
from hypothesis.internal.conjecture import providers
from hypothesis.internal.reflection import get_pretty_function_description
from hypothesis.strategies._internal.strings import OneCharStringStrategy
from schemathesis.generation import GenerationMode

from contract_tests import schemathesis_seam
from contract_tests.schemathesis_seam import (
    FUZZING,
    ProjectConfig,
    bind_transport,
    curl,
    from_schema,
    generation_mode,
    load_all_checks,
    negative_at,
    phase_data,
    phase_name,
    register_hook,
    seed_alone_decides,
    spare_hypothesis_work,
    without_target_phase,
)
from contract_tests.spec import Spec

SEAM = "contract_tests/schemathesis_seam.py"
# module -> the names the seam imports from it
INTERNALS = {
    "schemathesis.checks": ["CHECKS", "load_all_checks"],
    "schemathesis.config": ["ProjectConfig"],
    "schemathesis.core": ["NOT_SET", "NotSet", "curl"],
    "schemathesis.core.failures": ["FailureGroup"],
    "schemathesis.core.parameters": ["ParameterLocation"],
    "schemathesis.engine": ["Status", "events", "from_schema"],
    "schemathesis.engine.errors": ["ServerUnavailable"],
    "schemathesis.engine.recorder": ["CheckFailureInfo", "ScenarioRecorder"],
    "schemathesis.generation.meta": ["TestPhase"],
}
# "module.Name" -> the members and fields the suite reads of it (judge/verdicts.py, conformance.py, hooks.py,
# checks.py, the seam's functions): the objects the engine hands out, which the suite reads but never imports
MEMBERS = {
    "schemathesis.engine.Status": ["SKIP", "SUCCESS", "FAILURE"],
    "schemathesis.engine.events": ["PhaseStarted", "ScenarioFinished", "NonFatalError", "FatalError"],
    "schemathesis.engine.events.PhaseStarted": ["phase"],
    "schemathesis.engine.events.Phase": ["name"],
    "schemathesis.engine.events.ScenarioFinished": ["label", "status", "recorder", "elapsed_time"],
    "schemathesis.engine.events.NonFatalError": ["info", "value", "label"],
    "schemathesis.engine.events.FatalError": ["exception"],
    "schemathesis.engine.errors.EngineErrorInfo": ["code_sample", "title", "message"],
    "schemathesis.engine.recorder.ScenarioRecorder": ["cases", "checks", "interactions"],
    "schemathesis.engine.recorder.CaseNode": ["value"],
    "schemathesis.engine.recorder.CheckNode": ["name", "status", "failure_info"],
    "schemathesis.engine.recorder.CheckFailureInfo": ["code_sample", "failure", "steps"],
    "schemathesis.engine.recorder.ReproductionStep": ["case_id", "curl"],
    "schemathesis.engine.recorder.Interaction": ["request", "response"],
    "schemathesis.engine.recorder.Request": ["method", "uri", "body", "headers"],
    "schemathesis.core.failures.Failure": ["case_id", "title", "message"],
    "schemathesis.core.parameters.ParameterLocation": ["BODY", "PATH"],
    "schemathesis.generation.meta.TestPhase": ["FUZZING"],
    "schemathesis.generation.meta.CaseMetadata": ["generation", "phase", "components"],
    "schemathesis.generation.meta.ComponentInfo": ["mode"],
    "schemathesis.generation.modes.GenerationMode": ["POSITIVE", "NEGATIVE"],
    "schemathesis.checks.CHECKS": ["get_all_names", "get_by_names"],
}
# callable -> its parameters (keyword-only marked "*"), as the suite calls it
SIGNATURES: list[tuple[Callable[..., Any], list[str]]] = [
    (curl.generate, ["*method", "*url", "*body", "*verify", "*headers", "*known_generated_headers"]),
    (from_schema, ["schema"]),
    (load_all_checks, []),
    (ProjectConfig.get_hypothesis_settings, ["self", "*operation", "*phase", "*apply_ci_profile"]),
    (ProjectConfig.generation_for, ["self", "*operation", "*phase"]),
    (ProjectConfig.phases_for, ["self", "*operation"]),
    (ProjectConfig.checks_config_for, ["self", "*operation", "*phase"]),
]


def version() -> str:
    return str(schemathesis.__version__)


def moved(internals: dict[str, list[str]]) -> list[str]:
    """One line for each name that is not where `internals` says: what moved, and where the suite needs it."""
    lines = []
    for module_name, names in internals.items():
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            listed = ", ".join(names)
            lines.append(f"Schemathesis {version()} has no module {module_name} ({listed}): {SEAM} imports it")
            continue
        lines += [
            f"Schemathesis {version()} has no {module_name}.{name}: {SEAM} imports it"
            for name in names
            if not hasattr(module, name)
        ]
    return lines


def lacking(members: dict[str, list[str]]) -> list[str]:
    """One line for each member or field the suite reads that its owner no longer has."""
    lines = []
    for owner_name, names in members.items():
        module_name, _, attribute = owner_name.rpartition(".")
        owner = getattr(importlib.import_module(module_name), attribute, None)
        if owner is None:
            lines.append(f"Schemathesis {version()} has no {owner_name} ({', '.join(names)}): the suite reads them")
            continue
        have = set(dir(owner)) | set(getattr(owner, "__slots__", ()))
        have |= set(getattr(owner, "__dataclass_fields__", {}))
        lines += [f"Schemathesis {version()}: {owner_name} has no {name}" for name in names if name not in have]
    return lines


def test_each_internal_is_where_the_seam_imports_it() -> None:
    problems = moved(INTERNALS)
    assert not problems, "\n".join(problems)


def test_each_member_the_suite_reads_is_there() -> None:
    problems = lacking(MEMBERS)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(("function", "expected"), SIGNATURES, ids=lambda item: getattr(item, "__qualname__", ""))
def test_each_internal_keeps_its_parameters(function: Callable[..., Any], expected: list[str]) -> None:
    marks = {inspect.Parameter.KEYWORD_ONLY: "*", inspect.Parameter.VAR_KEYWORD: "**"}
    found = [marks.get(p.kind, "") + p.name for p in inspect.signature(function).parameters.values()]
    assert found == expected, f"Schemathesis {version()} changed {function.__qualname__}'s parameters"


def test_every_internal_the_seam_imports_is_pinned_here() -> None:
    tree = ast.parse(inspect.getsource(schemathesis_seam))
    imported: dict[str, list[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("schemathesis."):
            imported[node.module or ""] = [alias.name for alias in node.names]
    assert imported == INTERNALS
    docstring = schemathesis_seam.__doc__ or ""
    assert [module for module in INTERNALS if f"`{module}" not in docstring] == []


def test_a_moved_internal_fails_in_one_clear_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """What an upgrade that moves an internal shows: the name, and the one module to adapt."""
    import schemathesis.engine.errors

    monkeypatch.delattr(schemathesis.engine.errors, "ServerUnavailable")
    monkeypatch.setitem(sys.modules, "schemathesis.core.failures", None)  # a module gone: its import fails
    assert moved(INTERNALS) == [
        f"Schemathesis {version()} has no module schemathesis.core.failures (FailureGroup): {SEAM} imports it",
        f"Schemathesis {version()} has no schemathesis.engine.errors.ServerUnavailable: {SEAM} imports it",
    ]


def test_a_member_gone_fails_in_one_clear_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """What an upgrade that drops a member the suite reads shows: the owner and the member."""
    from schemathesis.engine.errors import EngineErrorInfo

    monkeypatch.delattr(EngineErrorInfo, "title")
    owner = "schemathesis.engine.errors.EngineErrorInfo"
    assert lacking(MEMBERS) == [f"Schemathesis {version()}: {owner} has no title"]


def test_a_moved_internal_stops_the_suite_at_its_import_in_one_line() -> None:
    """Past the pin tests, a user's install that moved an internal says so when the suite is imported."""
    code = (
        "import schemathesis.engine.errors as errors\n"
        "del errors.ServerUnavailable\n"
        "import contract_tests.schemathesis_seam\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith(f"ImportError: Schemathesis {version()} moved an internal the suite relies on (cannot")
    assert "ServerUnavailable" in last and "contract_tests/schemathesis_seam.py" in last


def loaded() -> Any:
    return schemathesis.openapi.from_dict(Spec.load().raw)


def test_the_config_swap_keeps_the_settings_but_the_target_phase() -> None:
    schema = loaded()
    before = schema.config.get_hypothesis_settings()
    assert hypothesis.Phase.target in before.phases  # else the swap has nothing left to do
    without_target_phase(schema)
    after = schema.config.get_hypothesis_settings()
    assert [phase for phase in before.phases if phase is not hypothesis.Phase.target] == list(after.phases)
    assert after.max_examples == before.max_examples and after.deadline == before.deadline


def test_the_config_swap_keeps_each_merged_setting_and_makes_it_once() -> None:
    schema, plain = loaded(), loaded()
    without_target_phase(schema)
    for operation in schema.get_all_operations():
        operation = operation.ok()
        for phase in (None, "examples", "coverage", "fuzzing", "stateful"):
            kept = schema.config.generation_for(operation=operation, phase=phase)
            assert kept == plain.config.generation_for(operation=operation, phase=phase)
            assert schema.config.generation_for(operation=operation, phase=phase) is kept
            checks = schema.config.checks_config_for(operation=operation, phase=phase)
            assert checks == plain.config.checks_config_for(operation=operation, phase=phase)
        assert schema.config.phases_for(operation=operation) == plain.config.phases_for(operation=operation)
    other = loaded()
    without_target_phase(other)  # each configuration remembers its own answers
    assert type(other.config).answers == {} and type(schema.config).answers


def test_the_known_codecs_have_hypothesis_own_characters() -> None:
    """What Hypothesis computes by trying every code point (or reads from a `.hypothesis` directory)."""
    for codec in schemathesis_seam.KNOWN_CODECS:
        encodable, lossy = schemathesis_seam.intervals_from_codec(codec)
        expected = schemathesis_seam._hypothesis_intervals_from_codec(codec)
        assert (encodable.intervals, lossy.intervals) == (expected[0].intervals, expected[1].intervals)


def test_hypothesis_is_spared_its_codec_loop_and_a_parse_in_each_thread() -> None:
    spare_hypothesis_work()
    assert charmap.intervals_from_codec is schemathesis_seam.intervals_from_codec  # strings.py reads it here
    asked = schemathesis_seam.intervals_from_codec.cache_info()
    OneCharStringStrategy.from_characters_args(codec="ascii")  # what `st.characters(codec=...)` builds
    assert schemathesis_seam.intervals_from_codec.cache_info() != asked
    assert isinstance(lambda_sources.LAMBDA_DIGEST_DESCRIPTION_CACHE, dict)
    assert isinstance(lambda_sources.AST_LAMBDAS_CACHE, dict)
    described: list[str] = []

    def describe() -> None:  # a new lambda in a new thread, as each engine run's workers make them
        described.append(get_pretty_function_description(lambda x: not x))

    for _ in range(2):
        thread = threading.Thread(target=describe)
        thread.start()
        thread.join()
    assert described == ["lambda x: not x"] * 2
    assert len(lambda_sources.LAMBDA_DIGEST_DESCRIPTION_CACHE) >= 1  # kept for the process, not the thread


def drawn(operation: Any, mode: GenerationMode = GenerationMode.POSITIVE) -> Any:
    """One case Schemathesis generates for `operation` (its fuzzing phase), with the schema's hooks applied:
    the first drawn, not shrunk (shrinking a case takes seconds)."""
    settings = hypothesis.settings(database=None, phases=[hypothesis.Phase.generate])
    return hypothesis.find(operation.as_strategy(mode), lambda _: True, settings=settings)


def test_a_hook_registered_by_name_is_applied_to_that_schema_only() -> None:
    schema, other = loaded(), loaded()
    marked: list[Any] = []
    register_hook(schema, "map_case", lambda _, case: marked.append(case) or case)
    drawn(other.find_operation_by_id("create_product"))
    assert marked == []
    case = drawn(schema.find_operation_by_id("create_product"))
    assert marked and marked[-1] is case


def test_a_cases_metadata_says_its_phase_mode_and_negative_parts() -> None:
    operation = loaded().find_operation_by_id("create_product")
    positive, negative = drawn(operation), drawn(operation, GenerationMode.NEGATIVE)
    assert (phase_name(positive), generation_mode(positive), negative_at(positive, "body")) == (
        FUZZING,
        "positive",
        False,
    )
    assert phase_data(positive) is not None
    assert (phase_name(negative), generation_mode(negative)) == (FUZZING, "negative")
    assert any(negative_at(negative, where) for where in ("body", "path", "query", "header", "cookie"))
    by_hand = operation.Case(body={}, media_type="application/json")
    assert (phase_name(by_hand), generation_mode(by_hand), phase_data(by_hand), negative_at(by_hand, "body")) == (
        None,
        None,
        None,
        False,
    )


def test_the_transport_sends_a_case_with_a_session() -> None:
    """judge/engine.BoundedTransport calls the schema's transport as `send(case, session=..., **kwargs)`."""
    parameters = inspect.signature(loaded().transport.send).parameters
    assert next(iter(parameters)) == "case" and parameters["session"].kind is inspect.Parameter.KEYWORD_ONLY


def test_the_schema_swap_replaces_the_transport_and_the_extra_data_source_in_clones_too() -> None:
    schema = loaded()
    assert isinstance(inspect.getattr_static(type(schema), "transport"), property)
    assert callable(inspect.getattr_static(type(schema), "create_extra_data_source"))
    transport = object()
    bind_transport(schema, transport)
    clone = schema.include(operation_id=["list_products"])
    assert schema.transport is transport and clone.transport is transport
    assert clone.create_extra_data_source() is None


def test_no_constant_of_a_loaded_local_module_is_drawn(tmp_path: Path) -> None:
    """Hypothesis reads constants from the local modules loaded when it draws; after `seed_alone_decides`
    a module loaded mid-run (as another worker's part imports one) adds none."""
    seed_alone_decides()
    module_file = tmp_path / "local_module_of_constants.py"
    module_file.write_text("MARKER = 98765432123\n", encoding="utf-8")
    spec = importlib.util.spec_from_file_location("local_module_of_constants", module_file)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
        constants = providers._get_local_constants()
        assert 98765432123 not in constants.set_for_type("integer") and len(constants) == 0
    finally:
        del sys.modules[spec.name]
