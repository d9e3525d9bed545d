"""The one module touching Schemathesis' internals: every import past its public surface and every class swap.

The suite drives Schemathesis' engine itself, one engine run per plan, and turns its events into
verdicts. It also judges an answer again by one of Schemathesis' checks, and shows a request as its
curl command. None of that is in Schemathesis' public surface, which is the names `schemathesis`
exports (`Config`, `openapi`, `check`, `hook`, `Response`, `DeserializationContext`, ...).

Every other module of the suite uses only that surface, and imports what it needs beyond it from
here (tests/project/test_architecture.py holds them to it). tests/contract_tests/test_schemathesis_seam.py
pins every name below. So a Schemathesis release that moves or changes one fails there first, in one
line naming it, rather than as a broken run. docs/development.md says what an upgrade takes.

Internal modules and names relied on:
- `schemathesis.engine`: `from_schema(schema).execute()` runs the engine. Its stream of `events`
  (`PhaseStarted`, `ScenarioFinished`, `NonFatalError`, `FatalError`) and each scenario's `Status`
  are read.
- `schemathesis.engine.errors.ServerUnavailable` says the target stopped answering (client/causes.py).
- `schemathesis.engine.recorder`: judge/verdicts.py reads a `ScenarioRecorder` (a scenario's cases,
  checks and interactions) and a `CheckFailureInfo` (a failed check's case and failure).
- `schemathesis.core`: `NotSet` and its one value `NOT_SET` mark a case without a body.
  `curl.generate` writes a request as a curl command.
- `schemathesis.core.parameters.ParameterLocation` and `schemathesis.generation.meta.TestPhase` tell,
  from a case's `meta`, where a negative case is negative and which phase made it. `negative_at`,
  `generation_mode`, `phase_name` and `phase_data` read them for judge/hooks.py, judge/checks.py
  and judge/engine.py.
- `schemathesis.core.failures.FailureGroup` is what `Case.validate_response` raises (judge/rejudge.py).
- `schemathesis.checks`: `CHECKS` (`get_all_names`, `get_by_names`) and `load_all_checks`.
- `schemathesis.config.ProjectConfig`: `get_hypothesis_settings` is overridden, and `__slots__` kept.

Some fields are read, not imported, and tests/contract_tests/test_schemathesis_seam.py pins each
of them too. They are the fields of the engine's events and of a scenario's record
(judge/verdicts.py, judge/conformance.py), a case's `meta` (the functions named above), a
parameter's `definition` (judge/checks.py) and the transport's `send` (judge/engine.py).

A schema's own hooks are registered through the documented form (`register_hook`).

Two classes are swapped for a subclass made here, with the object's data unchanged:
- A loaded schema's class, for its `transport` property and its `create_extra_data_source` method
  (`bind_transport`).
- Its `config`'s class, for `ProjectConfig.get_hypothesis_settings` (`without_target_phase`). The
  same subclass keeps each answer of `generation_for`, `phases_for` and `checks_config_for`
  (`RememberedProject`), which Schemathesis otherwise merges again for every case.

Two of Hypothesis' internals are replaced by the same answers, given sooner (`spare_hypothesis_work`).
`hypothesis.internal.charmap.intervals_from_codec` is answered directly for the two codecs Schemathesis
asks for. The lambda caches of `hypothesis.internal.lambda_sources` (`LAMBDA_DIGEST_DESCRIPTION_CACHE`,
`AST_LAMBDAS_CACHE`) are kept for the process rather than for each thread. And
`hypothesis.internal.conjecture.providers._get_local_constants` answers no constants
(`seed_alone_decides`), so that which modules are loaded when a case is drawn does not change it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, ClassVar

import hypothesis
import schemathesis
from hypothesis.internal import charmap, lambda_sources
from hypothesis.internal.conjecture import providers
from hypothesis.internal.constants_ast import Constants
from hypothesis.internal.intervalsets import IntervalSet

try:
    from schemathesis.checks import CHECKS, load_all_checks
    from schemathesis.config import ProjectConfig
    from schemathesis.core import NOT_SET, NotSet, curl
    from schemathesis.core.failures import FailureGroup
    from schemathesis.core.parameters import ParameterLocation
    from schemathesis.engine import Status, events, from_schema
    from schemathesis.engine.errors import ServerUnavailable
    from schemathesis.engine.recorder import CheckFailureInfo, ScenarioRecorder
    from schemathesis.generation.meta import TestPhase
except ImportError as exc:  # One line naming what moved, not a traceback deep in a run.
    raise ImportError(
        f"Schemathesis {schemathesis.__version__} moved an internal the suite relies on ({exc}): "
        "run tests/contract_tests/test_schemathesis_seam.py and adapt contract_tests/schemathesis_seam.py"
    ) from exc

__all__ = [
    "CHECKS",
    "FUZZING",
    "NOT_SET",
    "CheckFailureInfo",
    "FailureGroup",
    "NotSet",
    "ProjectConfig",
    "ScenarioRecorder",
    "ServerUnavailable",
    "Status",
    "bind_transport",
    "curl",
    "events",
    "from_schema",
    "generation_mode",
    "load_all_checks",
    "negative_at",
    "phase_data",
    "phase_name",
    "register_hook",
    "seed_alone_decides",
    "spare_hypothesis_work",
    "without_target_phase",
]

FUZZING = str(TestPhase.FUZZING.value)
"""The name `phase_name` gives a case of the fuzzing phase."""


class UntargetedProject(ProjectConfig):
    """Schemathesis' project settings without Hypothesis' target phase.

    Schemathesis asks Hypothesis to maximise each operation's share of 2xx answers. Below 1,000
    examples Hypothesis then runs one hill-climbing pass with no call budget. Where 2xx answers stay
    rare, as for a DELETE of a string identifier, that pass took 9-27 s of a 30-60 s run. It varied
    from one run to the next with the same seed (benchmarks/benchmark-history.md, "Contract-suite
    speed"). A gate must take predictable time. And the hooks already steer identifiers to existing
    items, which is what the climbing looked for.
    """

    __slots__ = ()

    def get_hypothesis_settings(self, *args: Any, **kwargs: Any) -> hypothesis.settings:
        settings = super().get_hypothesis_settings(*args, **kwargs)
        phases = [phase for phase in settings.phases if phase is not hypothesis.Phase.target]
        return hypothesis.settings(settings, phases=phases)


class RememberedProject(UntargetedProject):
    """The same project settings, each operation's and phase's merged settings made once.

    Schemathesis merges an operation's settings with the phase's and the project's again for every case it
    draws and every answer it checks (`DiffBase.from_hierarchy`, a dozen nested configurations). That is
    about 5 % of a run's CPU time, for the same answer each time: nothing changes a configuration once the
    engine runs. `without_target_phase` makes a subclass of this for each configuration, whose `answers`
    are its own.
    Waits for Schemathesis to keep these merges itself.
    """

    __slots__ = ()
    answers: ClassVar[dict[tuple[str, str | None, str | None], Any]] = {}

    def _remembered(self, method: str, operation: Any, phase: str | None, merge: Callable[[], Any]) -> Any:
        key = (method, None if operation is None else str(operation.label), phase)
        if key not in self.answers:
            self.answers[key] = merge()
        return self.answers[key]

    def generation_for(self, *, operation: Any = None, phase: str | None = None) -> Any:
        merge = functools.partial(super().generation_for, operation=operation, phase=phase)
        return self._remembered("generation", operation, phase, merge)

    def phases_for(self, *, operation: Any) -> Any:
        return self._remembered("phases", operation, None, functools.partial(super().phases_for, operation=operation))

    def checks_config_for(self, *, operation: Any = None, phase: str | None = None) -> Any:
        merge = functools.partial(super().checks_config_for, operation=operation, phase=phase)
        return self._remembered("checks", operation, phase, merge)


def without_target_phase(schema: Any) -> None:
    """Give `schema`'s configuration Hypothesis settings without the target phase (`UntargetedProject`), and
    each merged setting made once (`RememberedProject`, a subclass of its own for this configuration).

    No setting turns the phase off, so the configuration's class is swapped. The subclass has the same
    (empty) slots, so the object's data stays as Schemathesis built it. Only the settings methods differ."""
    schema.config.__class__ = type("RememberedProject", (RememberedProject,), {"__slots__": (), "answers": {}})


KNOWN_CODECS = {"utf-8": ((0, 0xD7FF), (0xE000, 0x10FFFF)), "ascii": ((0, 0x7F),)}
"""The code points each codec Schemathesis asks Hypothesis for encodes (utf-8: all but the surrogates), every
one of which decodes back to itself."""
_hypothesis_intervals_from_codec = charmap.intervals_from_codec


@functools.cache
def intervals_from_codec(codec_name: str) -> tuple[IntervalSet, IntervalSet]:
    """Hypothesis' `intervals_from_codec`, answering the codecs of `KNOWN_CODECS` without a loop.

    Hypothesis tries each of the 1,114,112 code points, unless a `.hypothesis` directory in the working
    directory holds the answer from an earlier run. That is about 2 s of CPU time per run started in a
    fresh directory, as in CI."""
    known = KNOWN_CODECS.get(codec_name)
    if known is None:
        return _hypothesis_intervals_from_codec(codec_name)
    return IntervalSet(known), IntervalSet(())


@functools.cache
def spare_hypothesis_work() -> None:
    """Spare Hypothesis work whose answer it already has, the same answers given (once per process).

    Known codecs are answered by `intervals_from_codec`. Hypothesis also describes the lambda of every
    `filter` made on a strategy it has described, and Schemathesis' coverage phase makes some for each
    parameter. It keeps the description and the parsed source file in caches of each thread. Every engine
    run starts new threads, which parsed Schemathesis' 4,500-line coverage module again (about 0.1 s each).
    With the caches kept for the process, each file is parsed once. This waits for Hypothesis to share
    these caches between threads, or to compute a codec's characters without a loop over every code point.
    """
    charmap.intervals_from_codec = intervals_from_codec
    lambda_sources.LAMBDA_DIGEST_DESCRIPTION_CACHE = {}  # type: ignore[assignment]
    lambda_sources.AST_LAMBDAS_CACHE = {}  # type: ignore[assignment]


NO_LOCAL_CONSTANTS = Constants()
"""The constants of "local" modules Hypothesis draws from: none, so that the seed alone decides a case."""


@functools.cache
def seed_alone_decides() -> None:
    """Keep Hypothesis from drawing constants out of the source of the local modules it has loaded.

    Hypothesis now and then draws a literal found in a module it counts as local (not the standard
    library, not site-packages). It reads the modules loaded when it draws a case. Under several
    workers, which modules are loaded at that moment depends on timing, so one seed generated other
    cases from one run to the next. An editable install and a wheel also differ: the suite's own modules
    are local in the first only. With no local constants, the seed alone decides (once per process).
    """
    providers._get_local_constants = lambda: NO_LOCAL_CONSTANTS
    providers.CONSTANTS_CACHE.cache.clear()


def bind_transport(schema: Any, transport: Any) -> None:
    """Make every request of `schema` (and of its clones) go through `transport`, and draw no data from answers.

    Schemathesis picks the transport from the schema (`schema.transport`, a property) and has no setting
    for it. So a subclass made for this run answers `transport` instead, with the schema's data unchanged.

    The same subclass has no "extra data source" (`create_extra_data_source`), which no setting turns off
    for the stateful phase. That source is a pool of values taken from every operation's answers. Workers
    fill it and draw from it in the order they happen to run, and other parts' writes on the target
    change it, so a seed would not generate the same."""
    attributes = {"transport": property(lambda _: transport), "create_extra_data_source": lambda _: None}
    schema.__class__ = type("BoundedSchema", (type(schema),), attributes)


def register_hook(schema: Any, name: str, hook: Callable[..., Any]) -> None:
    """Register `hook` as Schemathesis' hook `name` ("filter_case", "map_case", ...) on `schema` alone.

    Other schemas of the process keep their own hooks, so two runs in one process do not share them. This
    is the documented schema-scoped decorator (`@schema.hooks.hook("name")`), called as a function. It is
    called so because the suite's hooks are closures made for each run, not module-level functions named
    after their hook."""
    schema.hooks.hook(name)(hook)


def negative_at(case: Any, where: str) -> bool:
    """Whether the part of `case` at `where` ("body", "path", "query", ...) was generated to break the schema.

    A case carries how it was generated in `case.meta`, which is None for a case made by hand. Its shape
    is Schemathesis' own: `components`, keyed by a `ParameterLocation`, each with its generation mode. It
    is read directly rather than by `CaseMetadata.is_negative_at`, which 4.31 does not have yet."""
    component = None if case.meta is None else case.meta.components.get(ParameterLocation(where))
    return component is not None and str(component.mode.value) == "negative"


def generation_mode(case: Any) -> str | None:
    """How `case` was generated, "positive" or "negative" (`case.meta.generation.mode`).

    It is None for a case made by hand. A negative case breaks the schema in at least one part, and
    `negative_at` says which."""
    return None if case.meta is None else str(case.meta.generation.mode.value)


def phase_name(case: Any) -> str | None:
    """The phase that generated `case` ("examples", "coverage", "fuzzing", "stateful").

    It is None for a case made by hand. It is read from `case.meta.phase.name`, a `TestPhase`."""
    return None if case.meta is None else str(case.meta.phase.name.value)


def phase_data(case: Any) -> Any:
    """What the phase that generated `case` says of it (`case.meta.phase.data`), which the suite only prints.

    The coverage phase gives its scenario and description. It is None for a case made by hand."""
    return None if case.meta is None else case.meta.phase.data
