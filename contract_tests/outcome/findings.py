"""The outcome of a run: how often each check passed, and every violation with its evidence.

Schemathesis checks and the dedicated domain tests both report here, so the summary, the JUnit file and
the exit code treat them alike.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

from contract_tests.outcome.coverage import Coverage
from contract_tests.outcome.generation import Generated
from contract_tests.redact import shown_bytes

BODY_EXCERPT = 2000  # Characters of a response body quoted in a violation's evidence.
HEADER_EXCERPT = 500  # Characters of a header name or value quoted there.
HEADERS_SHOWN = 50

RULE_EXCERPT = 2000
"""Characters of a broken rule kept. A rule may quote what the target answered, which can be megabytes, so
it is cut as an answer's body is cut in its evidence."""


@dataclass(frozen=True)
class Violation:
    """A broken rule, with what it takes to reproduce it."""

    check: str
    surface: str
    operation: str
    rule: str
    curl: str
    response: str
    setup: tuple[str, ...] = ()
    """The requests (curl) that make the state the failing one depends on, in order. Empty when none."""


def same_finding(one: Violation, other: Violation) -> bool:
    """Whether two violations are one finding: the same rule broken by the same requests. A flaky target
    may answer them differently. The first answer is kept, so that every id in a report names one."""
    return replace(one, response="") == replace(other, response="")


@dataclass(frozen=True)
class Skip:
    """A check that could not be exercised on an operation, and why (never a silent pass)."""

    surface: str
    operation: str
    check: str
    reason: str


@dataclass(frozen=True)
class RunError:
    """A part of the run that could not complete. The verdict is incomplete (exit 2), never a silent pass."""

    cause: str
    """The cause class (contract_tests.client.causes): "connection reset", "timeout", "TLS", ..."""
    surface: str
    where: str
    """The check or operation that could not complete."""
    request: str
    """`METHOD URL` of the request it happened on, or "" when it was no request's."""
    detail: str

    def __str__(self) -> str:
        on = f" on {self.request}" if self.request else ""
        return f"[{self.surface}] {self.where}: {self.cause}{on}: {self.detail}"


@dataclass(frozen=True)
class Key:
    surface: str
    operation: str
    check: str


@dataclass
class RunInfo:
    """What a report needs to say which run it is, enough to repeat it."""

    seed: int | None = None
    targets: dict[str, str] = field(default_factory=dict)
    """Base URL per surface."""
    profile: str = ""
    suite_version: str = ""
    spec_version: str = ""
    duration: float = 0.0
    refused_credentials: int = 0
    """Requests refused (401) although they carried the suite's current credentials."""
    timings: dict[str, float] = field(default_factory=dict)
    """Seconds spent on each operation, by "surface.operation"."""
    shard: str | None = None
    """`K/N` for one shard of a run (`--shard`), None for a whole run."""
    shards: int | None = None
    """For a merged run (`shop-contract merge`): how many shards it combines."""
    command: str = ""
    """`shop-contract ...` repeating the whole run, credentials read from the environment."""
    workers: int = 1
    """Requests in flight at most (`--workers`, or what `auto` chose)."""
    max_time: float | None = None
    """The run's time budget in seconds (`--max-time`), if any."""
    narrowed: list[str] = field(default_factory=list)
    """The options that narrowed the run's scope (`--include`, `--checks`, ...). A shard is `shard`. It is
    empty for a whole run, the only kind that can tell a baseline's entry no longer reproduces."""

    def spent(self, surface: str, operation: str, seconds: float) -> None:
        key = f"{surface}.{operation}"
        self.timings[key] = self.timings.get(key, 0.0) + seconds


@dataclass(frozen=True)
class InteractionVerdict:
    """One interaction of a consumer contract, as judged. Its verdicts are in the ledger under its name."""

    name: str
    """`operation#N`, the contract's name of it. The ledger keeps its verdicts under that operation."""
    surface: str
    operation: str
    summary: str
    """The request shape in a few words."""
    recorded_status: int
    """What the mock answered the recorded example."""
    status: int | None
    """What the backend answered the replay. None when read against a spec, or not replayed."""
    verdict: str
    """"ok", "broken" or "not exercised"."""
    problems: tuple[str, ...] = ()


@dataclass
class ConsumerRun:
    """A consumer contract's verification (`--consumer FILE`), against a backend or a spec revision."""

    consumer: str
    file: str
    against: str
    """"backend" (replayed on --base-url / --gateway-url) or "spec" (read against --spec alone)."""
    recorded_spec: str
    """`version digest` of the spec the mock served when it was recorded."""
    same_spec: bool
    """Whether the spec judged against is the one recorded with (same digest)."""
    journal_full: bool
    """The mock's journal was full when the contract was recorded. Older requests may be missing from it."""
    interactions: list[InteractionVerdict] = field(default_factory=list)


@dataclass(frozen=True)
class Acceptance:
    """One entry of a baseline file (`--baseline FILE`). It holds a defect accepted, why, and until when."""

    fingerprint: str
    """outcome/fingerprint.py's `fingerprint` of the violations it accepts."""
    reason: str
    expires: str | None = None
    """The last day it accepts anything (ISO `YYYY-MM-DD`). None means no end."""


@dataclass
class BaselineRun:
    """A baseline applied to a run (outcome/baseline.py). It holds what it accepted, and which of its
    entries the gate should hear about."""

    file: str
    entries: list[Acceptance]
    accepted: list[Violation] = field(default_factory=list)
    """The violations an entry accepts, out of `Ledger.violations` (which holds the new ones)."""
    not_reproduced: list[Acceptance] = field(default_factory=list)
    """Entries nothing in this run matched. Only a complete whole run tells (`judged`)."""
    expired: list[Acceptance] = field(default_factory=list)
    """Entries past their date. They accept nothing, and their violations are new."""
    judged: bool = False
    """Whether the run was complete and whole, so that `not_reproduced` means fixed (or never hit)."""
    strict: bool = False
    """Under `--baseline-strict`, an entry not reproduced or expired fails the gate."""


@dataclass
class Ledger:
    """Passes per (surface, operation, check) and the violations, in the order they were found."""

    passes: Counter[Key] = field(default_factory=Counter)
    violations: list[Violation] = field(default_factory=list)
    errors: list[RunError] = field(default_factory=list)
    not_exercised: list[Skip] = field(default_factory=list)
    run: RunInfo = field(default_factory=RunInfo)
    secrets: tuple[str, ...] = ()
    """Credentials the suite sent. They are masked wherever the reports show what a target answered."""
    aborted: str | None = None
    """Why the run stopped before its end (credentials lost, an internal error). The exit code is 2."""
    prelude: tuple[str, ...] = ()
    """Requests (curl) the run made before testing, such as the items others reference on an empty target.
    Every violation's setup starts with them, so that its reproduction is whole."""
    coverage: Coverage = field(default_factory=Coverage)
    """What of the contract the run exercised (contract_tests/outcome/coverage.py)."""
    consumer: ConsumerRun | None = None
    """A consumer contract's verification, when the run is one (`--consumer FILE`)."""
    unreached: list[str] = field(default_factory=list)
    """The parts of the run its time budget (`--max-time`) did not reach. The verdict is then partial."""
    baseline: BaselineRun | None = None
    """The accepted findings (`--baseline FILE`), once applied. Then `violations` are the new ones only."""
    generated: dict[str, Generated] = field(default_factory=dict)
    """What each part of the run generated, by part ("backend conformance fuzzing", "backend read_back
    customers", ...). A seed generates the same whatever the timing (docs/ci-gate.md)."""

    def passed(self, surface: str, operation: str, check: str, times: int = 1) -> None:
        self.passes[Key(surface, operation, check)] += times

    def violated(self, violation: Violation) -> None:
        if len(violation.rule) > RULE_EXCERPT:
            violation = replace(violation, rule=violation.rule[:RULE_EXCERPT] + " …")
        if self.prelude:
            violation = replace(violation, setup=(*self.prelude, *violation.setup))
        if not any(same_finding(violation, known) for known in self.violations):
            self.violations.append(violation)

    def part(self) -> Ledger:
        """An empty ledger for a part of the run done alongside others, with the same scope and secrets.
        `absorb` adds it back in a fixed order, so that what is found does not depend on which part
        finished first."""
        return Ledger(secrets=self.secrets, coverage=self.coverage.planned())

    def generation(self, part: str) -> Generated:
        """The record of what the part named `part` generates."""
        return self.generated.setdefault(part, Generated())

    def absorb(self, part: Ledger) -> None:
        """Add what `part` (made by `part()`) found: its verdicts, coverage and time spent."""
        self.passes.update(part.passes)
        self.coverage.add(part.coverage)
        for violation in part.violations:
            self.violated(violation)
        for skip in part.not_exercised:
            self.skipped(skip.surface, skip.operation, skip.check, skip.reason)
        self.errors += part.errors
        self.unreached += [item for item in part.unreached if item not in self.unreached]
        for operation, seconds in part.run.timings.items():
            self.run.timings[operation] = self.run.timings.get(operation, 0.0) + seconds
        for name, generated in part.generated.items():
            self.generation(name).merge(generated)

    def keep_only(self, selected: Callable[[str], bool]) -> None:
        """Drop the verdicts of checks not `selected` (`--checks`, `--exclude-checks`). A domain test judges
        several checks."""
        for key in [key for key in self.passes if not selected(key.check)]:
            del self.passes[key]
        self.violations[:] = [v for v in self.violations if selected(v.check)]

    def skipped(self, surface: str, operation: str, check: str, reason: str) -> None:
        skip = Skip(surface, operation, check, reason)
        if skip not in self.not_exercised:
            self.not_exercised.append(skip)

    def causes(self) -> Counter[str]:
        """How many errors of each cause, in the order the causes were first met."""
        return Counter(error.cause for error in self.errors)

    def failures(self) -> Counter[Key]:
        return Counter(Key(v.surface, v.operation, v.check) for v in self.violations)

    def exercised(self) -> set[str]:
        """Checks that judged at least one response (passed or not)."""
        return {key.check for key in self.passes} | {v.check for v in self.violations}

    def violated_checks(self) -> set[str]:
        return {v.check for v in self.violations}

    @property
    def ok(self) -> bool:
        return not self.violations

    @property
    def whole(self) -> bool:
        """Whether the run covered the whole contract. It had no shard and no option narrowing it, and was
        not a consumer contract's verification."""
        return self.run.shard is None and not self.run.narrowed and self.consumer is None

    @property
    def complete(self) -> bool:
        """Whether every part of the run ran to its end, with no budget cut, no run error and no abort."""
        return not self.unreached and not self.errors and self.aborted is None


def describe_response(status: int, headers: Iterable[tuple[bytes, bytes]], content: bytes) -> str:
    """A response as quoted in evidence.

    - The status.
    - The headers, at most `HEADERS_SHOWN` of them, each value cut at `HEADER_EXCERPT` characters.
    - The body's first `BODY_EXCERPT` characters.

    Every part is read as the bytes the target sent and shown by the one rule (redact.shown_bytes).
    """
    pairs = list(headers)
    lines = [f"HTTP {status}"]
    lines += [f"{shown_bytes(name, HEADER_EXCERPT)}: {shown_bytes(value, HEADER_EXCERPT)}" for name, value in pairs]
    if len(pairs) > HEADERS_SHOWN:
        lines[HEADERS_SHOWN + 1 :] = [f"… and {len(pairs) - HEADERS_SHOWN} more header(s)"]
    excerpt = shown_bytes(content[: BODY_EXCERPT * 4], BODY_EXCERPT) if content else ""
    return "\n".join([*lines, "", excerpt]) if excerpt else "\n".join(lines)
