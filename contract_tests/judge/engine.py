"""Schemathesis' engine as this suite sets it up for one surface, and the plans a surface's test is made of.

The setup has four parts:
- The configuration is built in code. It is never discovered from a `schemathesis.toml`, so a run does
  not depend on the directory it starts from.
- Its requests are bounded.
- Its settings leave out Hypothesis' target phase.
- Our checks and hooks are installed.

A plan says which operations and phases one engine run takes.

One seed generates the same cases whatever the timing (docs/ci-gate.md). Each operation draws from a seed
of its own, which Schemathesis derives from the run's seed and the operation's label. Nothing an engine
generates depends on answers another operation got, in whichever order its workers took them. So no data
is taken from answers, there is no error feedback, and one operation makes each path's probes of
undocumented methods. No Hypothesis health check depends on how fast a loaded machine draws. Every case
sent is recorded, in a canonical form, into the digest of its part (`Recorder`).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any, Protocol

import requests
import schemathesis

from contract_tests.check_names import ALL_CHECKS, STRICT_CHECKS
from contract_tests.client.bounded import Limits, Trust
from contract_tests.client.bounded_requests import bounded_session
from contract_tests.client.causes import chain
from contract_tests.client.keyring import Keyring
from contract_tests.client.pacing import OVERLOADED, BudgetSpent
from contract_tests.client.surface import Surface
from contract_tests.client.under_test import Target
from contract_tests.judge import checks as _registered_checks  # noqa: F401  (registers our checks)
from contract_tests.judge import deserializer as _registered_deserializer  # noqa: F401  (deep JSON is malformed JSON)
from contract_tests.judge import hooks
from contract_tests.judge.canonical import Canonical
from contract_tests.judge.known import Known
from contract_tests.options import Options
from contract_tests.outcome.generation import Generated
from contract_tests.schemathesis_seam import (
    NotSet,
    bind_transport,
    generation_mode,
    phase_data,
    phase_name,
    register_hook,
    seed_alone_decides,
    spare_hypothesis_work,
    without_target_phase,
)
from contract_tests.sharding import collection_name, collection_operations
from contract_tests.spec import Spec


class RunOf(Protocol):
    """What the engine reads of the run object (judge/run_context.RunContext).

    It is a protocol rather than that class, so that the engine stays below the run object in the chain
    of imports (MAX_LEVELS in tests/project/test_architecture.py). The run object's module sits one level
    above it."""

    @property
    def spec(self) -> Spec: ...

    @property
    def options(self) -> Options: ...

    @property
    def target(self) -> Target: ...


class ConformanceError(Exception):
    """Schemathesis could not run at all (e.g. the schema could not be processed)."""


STATELESS = ("examples", "coverage", "fuzzing")
"""Schemathesis' phases that test one operation at a time, in the order the engine runs them."""
COVERAGE_SHARES = 2
"""How many runs share the coverage phase's cases (`plans`).

They run side by side with more than one worker, and one after the other with one. They are the same
runs either way, and a failure ends its operation's cases in its own share only."""


def schemathesis_config(
    options: Options, surface: Surface, stateful: bool, stateless: AbstractSet[str] = frozenset(STATELESS)
) -> dict[str, Any]:
    """The run's configuration, as a `schemathesis.toml` would hold it.

    `stateless` says which of the examples, coverage and fuzzing phases run. `stateful` says whether the
    stateful phase runs."""
    strict = options.enabled_strict
    return {
        "suppress-health-check": ["all"],  # too_slow and others time the draws, so a loaded machine can fail them.
        "seed": options.seed_value,
        "workers": options.workers or 1,
        "base-url": surface.base_url,
        "headers": surface.headers,
        "request-timeout": options.request_timeout,
        "tls-verify": Trust(options.ca_bundle, options.insecure).verify(),  # Its reproductions then say `curl -k`.
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
            "examples": {"enabled": "examples" in stateless},
            # Error feedback steers later draws by earlier 4xx answers, shared by every operation of the engine.
            "fuzzing": {"enabled": "fuzzing" in stateless, "error-feedback": {"enabled": False}},
            "coverage": {"enabled": "coverage" in stateless and options.coverage_phase},
            # Links inferred from answers take their values from lists, which other parts' writes change.
            "stateful": {
                "enabled": stateful,
                "max-steps": options.stateful_steps,
                "inference": {"algorithms": ["location-headers"]},
            },
        },
    }


def probes_of_methods(spec: Spec, operations: AbstractSet[str]) -> list[dict[str, Any]]:
    """Per-operation settings that leave each path's probes of undocumented methods to one operation.

    The coverage phase makes these probes, and the operation that keeps them is the first by name.
    Schemathesis gives them to whichever operation of the path its workers reach first. So which
    operation, and which of its parameters, sent them was otherwise a matter of timing."""
    by_path: dict[str, list[str]] = {}
    for name in sorted(operations):
        if name in spec.operations:
            by_path.setdefault(spec.operations[name].path, []).append(name)
    others = sorted(name for names in by_path.values() for name in names[1:])
    if not others:
        return []
    return [{"include-operation-id": others, "phases": {"coverage": {"unexpected-methods": []}}}]


def has_links(spec: Spec, operations: AbstractSet[str]) -> bool:
    """Whether the stateful phase has a link to follow among `operations`."""
    return any(
        collection.create.id in operations and link["operationId"] in operations
        for collection in spec.collections
        for link in collection.create.links.values()
    )


class Recorder:
    """Records every case a plan sends into its part's record, in canonical form (judge/canonical.py).

    Cases are kept by operation, and a stateful plan keeps its one chain of steps. They are kept in the
    order sent, because one worker thread generates and sends an operation's cases in an order of their
    own."""

    def __init__(self, generated: Generated, canonical: Canonical, stateful: bool = False) -> None:
        self.generated, self.canonical, self.stateful = generated, canonical, stateful

    def sent(self, case: Any) -> tuple[str, int]:
        """Record `case`, about to be sent. Returns its key and position, for `unsent`."""
        key = "steps" if self.stateful else str(case.operation.label)
        phase = phase_name(case)
        form = {
            "operation": case.operation.label,
            "method": case.method,
            "path": case.path_parameters,
            "query": case.query,
            "headers": self.canonical.headers(case.headers),
            "cookies": self.canonical.headers(case.cookies),
            "body": None if isinstance(case.body, NotSet) else case.body,
            "media_type": case.media_type,
            "phase": None if phase is None else [phase, stable_repr(phase_data(case))],
            "mode": generation_mode(case),
        }
        return key, self.generated.add(key, self.canonical(form))

    def unsent(self, at: tuple[str, int], why: str) -> None:
        self.generated.unsent(*at, why)


class BoundedTransport:
    """Schemathesis' requests transport, sending through a session bounded in time and size.

    The bounds come from `contract_tests.client.bounded`, and each request carries the keyring's current
    credentials. Every case is recorded (`Recorder`). A case the time budget stopped, or one the target
    refused after every retry, is listed as well."""

    def __init__(
        self,
        inner: Any,
        limits: Limits,
        keyring: Keyring | None,
        expected: dict[str, str],
        recorder: Recorder | None = None,
    ) -> None:
        self._inner = inner
        self._bounded = {"limits": limits, "keyring": keyring, "expected": expected}
        self._fallback = requests.Session()
        self._recorder = recorder

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def send(self, case: Any, *, session: requests.Session | None = None, **kwargs: Any) -> Any:
        bounded = bounded_session(session or self._fallback, **self._bounded)  # type: ignore[arg-type]
        if self._recorder is None:
            return self._inner.send(case, session=bounded, **kwargs)
        at = self._recorder.sent(case)
        try:
            response = self._inner.send(case, session=bounded, **kwargs)
        except Exception as exc:
            if any(isinstance(error, BudgetSpent) for error in chain(exc)):
                self._recorder.unsent(at, "not sent: the time budget was spent")
            raise
        if response.status_code in OVERLOADED:
            self._recorder.unsent(at, f"answered {response.status_code} after every retry (judged as answered)")
        return response


def load_schema(run_ctx: RunOf, surface: Surface, plan: Plan, known: Known, generated: Generated | None = None) -> Any:
    """`schema` for one plan on `surface`, its requests sent through the run's limits and keyring.

    When `generated` is given, what the schema sends is recorded into it."""
    spec, options, operations = run_ctx.spec, run_ctx.options, set(plan.operations)
    stateful, stateless = plan.stateful, plan.stateless
    linked = stateful and has_links(spec, operations)
    settings = schemathesis_config(options, surface, linked, stateless)
    settings["operations"] = probes_of_methods(spec, operations)
    config = schemathesis.Config.from_dict(settings)
    schema = schemathesis.openapi.from_dict(spec.raw, config=config).include(operation_id=sorted(operations))
    others = sorted(set(spec.operations) - operations)
    if others:  # With per-operation settings, Schemathesis' own filter lets every operation through `include`.
        schema = schema.exclude(operation_id=others)
    without_target_phase(schema)  # A gate must take predictable time (the seam says why).
    spare_hypothesis_work()  # The same answers, sooner (the seam says how).
    seed_alone_decides()  # No constants of whichever modules happen to be loaded (the seam says why).
    recorder = None
    if generated is not None:
        canonical = Canonical(known.identities, [surface.base_url], surface.headers)
        recorder = Recorder(generated, canonical, stateful=not stateless)
    limits, keyring = run_ctx.target.limits, run_ctx.target.keyring
    bind_transport(schema, BoundedTransport(schema.transport, limits, keyring, surface.headers, recorder))
    hooks.register_formats()
    hooks.install(schema, spec, known)
    if plan.share != (0, 1):
        sliced(schema, *plan.share)
    return schema


@dataclass(frozen=True)
class Plan:
    """One run of Schemathesis' engine: these operations, with some stateless phases, the stateful one, or both."""

    operations: frozenset[str]
    stateless: frozenset[str] = frozenset(STATELESS)
    stateful: bool = True
    share: tuple[int, int] = (0, 1)
    """(k, n) keeps only the cases whose digest is k modulo n (`sliced`). (0, 1) is every case."""
    collection: str = ""
    """The collection whose links a stateful plan follows."""

    @property
    def part(self) -> str:
        """The part of the run this plan is, as the digests of what was generated name it."""
        phases = [phase for phase in STATELESS if phase in self.stateless]
        stateful = [f"stateful {self.collection}".strip()] if self.stateful else []
        share = [f"share {self.share[0] + 1}/{self.share[1]}"] if self.share[1] > 1 else []
        return " ".join(["conformance", "+".join([*phases, *stateful]), *share])


def plans(spec: Spec, options: Options, surface: Surface) -> list[Plan]:
    """The engine runs that test `surface`.

    They are the same whatever the number of workers, since one seed generates the same cases. The runs
    are these.
    - Each stateless phase runs on the operations.
    - The coverage phase runs in `COVERAGE_SHARES` runs, each sending its share of every operation's
      cases. An operation with many fields has hundreds, sent one after another.
    - Then the stateful phase runs per collection, whose links stay within it."""
    operations = frozenset(op for op in surface.operations if not options.include or op in options.include)
    mine = operations & options.part.operations(spec)
    phases = [p for p in STATELESS if p != "coverage" or options.coverage_phase] if mine else []
    counts = {phase: COVERAGE_SHARES if phase == "coverage" else 1 for phase in phases}
    found = [
        Plan(mine, frozenset({phase}), stateful=False, share=(k, n)) for phase, n in counts.items() for k in range(n)
    ]
    for collection in spec.collections:
        linked = operations & collection_operations(collection)
        name = collection_name(collection)
        if name in options.part.collections(spec) and has_links(spec, linked):
            found.append(Plan(linked, stateless=frozenset(), collection=name))
    return found


ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def stable_repr(value: Any) -> str:
    """`repr(value)` without the memory addresses some objects show, so it is the same text in every process.

    Schemathesis' `NOT_SET`, an absent body, is `<NotSet object at 0x...>`."""
    return ADDRESS.sub("", repr(value))


def sliced(schema: Any, k: int, n: int) -> None:
    """Send only the cases whose digest is `k` modulo `n`.

    So `n` runs of one seed, each with its own `k`, share the cases one run sends. The digest is of what
    was generated. The credentials a case carries are not part of it, nor the identifiers the other hooks
    give it after this filter. Its form is the same in every process (`stable_repr`). With the address of
    `NOT_SET` in it, a case's share was the process's chance."""

    def filter_case(context: Any, case: Any) -> bool:
        generated = (case.method, case.path_parameters, case.query, case.body, case.media_type, phase_data(case))
        digest = hashlib.blake2b(stable_repr(generated).encode("utf-8", "backslashreplace"), digest_size=8).digest()
        return int.from_bytes(digest, "big") % n == k

    register_hook(schema, "filter_case", filter_case)
