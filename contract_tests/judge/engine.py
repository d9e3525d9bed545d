"""Schemathesis' engine as this suite sets it up for one surface: the configuration, built in code (never
discovered from a `schemathesis.toml`, so a run does not depend on the directory it starts from), its
requests bounded, its settings without Hypothesis' target phase, our checks and hooks installed; and the
plans (which operations and phases one engine run takes) a surface's test is made of.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any

import hypothesis
import requests
import schemathesis
from schemathesis.config import ProjectConfig

from contract_tests.check_names import ALL_CHECKS, STRICT_CHECKS
from contract_tests.client.bounded import Limits, Trust
from contract_tests.client.bounded_requests import bounded_session
from contract_tests.client.keyring import Keyring
from contract_tests.client.surface import Surface
from contract_tests.judge import checks as _registered_checks  # noqa: F401  (registers our checks)
from contract_tests.judge import deserializer as _registered_deserializer  # noqa: F401  (deep JSON is malformed JSON)
from contract_tests.judge import hooks
from contract_tests.judge.known import Known
from contract_tests.options import Options
from contract_tests.sharding import collection_name, collection_operations
from contract_tests.spec import Spec


class ConformanceError(Exception):
    """Schemathesis could not run at all (e.g. the schema could not be processed)."""


STATELESS = ("examples", "coverage", "fuzzing")
"""Schemathesis' phases that test one operation at a time, in the order the engine runs them."""
COVERAGE_SHARES = 2
"""Runs side by side that share the coverage phase's cases, when the plans run apart (`plans`)."""


def schemathesis_config(
    options: Options, surface: Surface, stateful: bool, stateless: AbstractSet[str] = frozenset(STATELESS)
) -> dict[str, Any]:
    """The run's configuration, as a `schemathesis.toml` would hold it; `stateless`: which of the examples,
    coverage and fuzzing phases run, `stateful`: the stateful phase."""
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
            "examples": {"enabled": "examples" in stateless},
            "fuzzing": {"enabled": "fuzzing" in stateless},
            "coverage": {"enabled": "coverage" in stateless and options.coverage_phase},
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
    stateless: AbstractSet[str] = frozenset(STATELESS),
    share: tuple[int, int] = (0, 1),
) -> Any:
    linked = stateful and has_links(spec, operations)
    config = schemathesis.Config.from_dict(schemathesis_config(options, surface, linked, stateless))
    schema = schemathesis.openapi.from_dict(spec.raw, config=config).include(operation_id=sorted(operations))
    schema.config.__class__ = UntargetedProject  # same slots; only the settings method differs
    bound(schema, BoundedTransport(schema.transport, limits, keyring, surface.headers))
    hooks.register_formats()
    hooks.install(schema, spec, known)
    if share != (0, 1):
        sliced(schema, *share)
    return schema


@dataclass(frozen=True)
class Plan:
    """One run of Schemathesis' engine: these operations, with some stateless phases, the stateful one, or both."""

    operations: frozenset[str]
    stateless: frozenset[str] = frozenset(STATELESS)
    stateful: bool = True
    share: tuple[int, int] = (0, 1)
    """(k, n): only the cases whose digest is k modulo n (`sliced`); (0, 1) is every case."""


def plans(spec: Spec, options: Options, surface: Surface, apart: bool = False) -> list[Plan]:
    """The engine runs that test `surface`: one with every phase; on a shard (sharding.py), the stateless
    phases on the operations and the stateful phase per collection, whose links stay within it.

    `apart` (to run side by side, on a slow network): each stateless phase is a run of its own too, and
    the coverage phase is `COVERAGE_SHARES` runs, each sending its share of every operation's cases:
    an operation with many fields has hundreds, one after another within a run.
    """
    operations = frozenset(op for op in surface.operations if not options.include or op in options.include)
    if options.part.whole and not apart:
        return [Plan(operations)] if operations else []
    mine = operations & options.part.operations(spec)
    phases = [p for p in STATELESS if p != "coverage" or options.coverage_phase]
    shares = {phase: COVERAGE_SHARES if apart and phase == "coverage" else 1 for phase in phases}
    runs = [(frozenset({phase}), (k, n)) for phase, n in shares.items() for k in range(n)] if apart else []
    runs = (runs or [(frozenset(phases), (0, 1))]) if mine else []
    found = [Plan(mine, each, stateful=False, share=share) for each, share in runs]
    for collection in spec.collections:
        linked = operations & collection_operations(collection)
        if collection_name(collection) in options.part.collections(spec) and has_links(spec, linked):
            found.append(Plan(linked, stateless=frozenset()))
    return found


ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def stable_repr(value: Any) -> str:
    """`repr(value)` without the memory addresses some objects show (Schemathesis' `NOT_SET`, an absent
    body, is `<NotSet object at 0x...>`): the same text in every process."""
    return ADDRESS.sub("", repr(value))


def sliced(schema: Any, k: int, n: int) -> None:
    """Send only the cases whose digest is `k` modulo `n`: `n` runs of one seed, each with its own `k`,
    share the cases one run sends. The digest is of what was generated (the credentials a case carries,
    and the identifiers the other hooks give it after this filter, are not part of it), in a form the
    same in every process (`stable_repr`: with the address of `NOT_SET` in it, a case's share was the
    process's chance)."""

    def filter_case(context: Any, case: Any) -> bool:
        phase = case.meta.phase.data if case.meta is not None else None
        generated = (case.method, case.path_parameters, case.query, case.body, case.media_type, phase)
        digest = hashlib.blake2b(stable_repr(generated).encode("utf-8", "backslashreplace"), digest_size=8).digest()
        return int.from_bytes(digest, "big") % n == k

    schema.hooks.register_hook_with_name(filter_case, "filter_case")
