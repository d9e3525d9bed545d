"""The options of a run, shared by the CLI and the pytest plugin so both behave the same.

Profiles set the effort. `default` runs every phase, with 25 examples per operation. `fast` runs 6
examples, shorter stateful runs and no coverage phase. Without that phase, `invalid_values_rejected`
still tests the bounds.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path

from contract_tests.check_names import ALL_CHECKS, RACE_TRIES, STRICT_CHECKS
from contract_tests.sharding import WHOLE, Shard
from contract_tests.usage import UsageError
from shop_contract.urls import url_problem

DEFAULT_DEADLINE = 10.0  # Seconds for one whole request, with connect, headers and body.
DEFAULT_MAX_RESPONSE_SIZE = 10 * 1024 * 1024  # Bytes of one response body, decompressed.
MAX_WORKERS = 64
MAX_TIME = 7 * 24 * 3600.0  # Seconds, a week: the longest --max-time, --wait and --request-timeout.
MAX_RACE_TRIES = 10_000


def carried_by_a_header(credential: str) -> bool:
    """Whether a header carries `credential` as it is: not empty, printable ASCII, no space at either end."""
    return credential.isascii() and credential.isprintable() and credential == credential.strip() != ""


@dataclass(frozen=True)
class Profile:
    max_examples: int
    stateful_steps: int
    coverage: bool  # Schemathesis' coverage phase tries every boundary value and unexpected method, so it is slow.


PROFILES = {
    "default": Profile(max_examples=25, stateful_steps=6, coverage=True),
    "fast": Profile(max_examples=6, stateful_steps=4, coverage=False),
}


@dataclass(frozen=True)
class Options:
    base_url: str | None = None
    gateway_url: str | None = None
    api_key: str | None = None
    token: str | None = None
    token_url: str | None = None
    client_id: str | None = None
    client_secret: str | None = None
    spec: Path | None = None  # None means the bundled spec.
    profile: str = "default"
    max_examples: int | None = None
    workers: int | None = None
    """Requests in flight at most (`--workers N`). None is `--workers auto`, sized from the target's
    latency (client/pacing.py), and one on loopback."""
    max_time: float | None = None
    """A budget in seconds (`--max-time`). The run ends with what it found by then, and says what it did
    not reach. The verdict is then partial."""
    seed: int | None = None
    race_tries: int = RACE_TRIES
    """Tries of each race at most (`--race-tries`, judge/domain/racing.py)."""
    include: tuple[str, ...] = ()
    strict: bool = False
    strict_checks: tuple[str, ...] = ()
    domain: bool = True
    conformance: bool = True
    junit_xml: Path | None = None
    report_dir: Path | None = None
    request_timeout: float = DEFAULT_DEADLINE
    """The total deadline of one request, with connect, headers and body."""
    max_response_size: int = DEFAULT_MAX_RESPONSE_SIZE
    wait: float = 0.0
    """Seconds to wait for a target that is still starting."""
    checks: tuple[str, ...] = ()
    """Only these checks, or all when empty."""
    exclude_checks: tuple[str, ...] = ()
    quiet: bool = False
    verbose: bool = False
    """The terminal summary in full, with every check, operation and violation, as summary.txt has it."""
    shard: Shard | None = None
    """The part of the run's work this run does (`--shard K/N`, contract_tests/sharding.py), or None for all."""
    ca_bundle: Path | None = None
    """The CA certificates (PEM) a TLS target's certificate is verified against (`--ca-bundle`)."""
    insecure: bool = False
    """No TLS verification at all (`--insecure`), as for a self-signed development certificate."""
    consumer: Path | None = None
    """A consumer contract to verify (`--consumer FILE`). It is replayed on the target. With no target, it
    is read against the spec (`--spec`) alone. The run is then that verification only."""
    baseline: Path | None = None
    """Accepted findings (`--baseline FILE`, contract_tests/outcome/baseline.py). The run fails on the others."""
    baseline_update: bool = False
    """Add what the run found and the baseline lacks to it, each with a placeholder reason."""
    baseline_prune: bool = False
    """Drop from the baseline what a complete whole run did not reproduce."""
    baseline_strict: bool = False
    """An entry not reproduced, or expired, fails the run."""
    export_tests: Path | None = None
    """Where to write the violations as a pytest file (`--export-tests DIR`), or None for nowhere."""
    seed_value: int = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "seed_value", self.seed if self.seed is not None else random.randrange(2**31))
        self.validate()

    def validate(self) -> None:
        if self.base_url is None and self.gateway_url is None and self.consumer is None:
            raise UsageError("give --base-url, --gateway-url or both")
        for name, url, mount_point in (  # Each operation's path is appended to a mount point: no query.
            ("--base-url", self.base_url, True),
            ("--gateway-url", self.gateway_url, True),
            ("--token-url", self.token_url, False),  # Azure AD B2C names its policy so: ?p=B2C_1_signin.
        ):
            problem = None if url is None else url_problem(url, query=not mount_point)
            if problem is not None:
                raise UsageError(f"{name} {problem}")
        realm = (self.token_url, self.client_id, self.client_secret)
        if any(realm) and not all(realm):
            raise UsageError("--token-url, --client-id and --client-secret go together")
        for flag, value in (("--api-key", self.api_key), ("--token", self.token)):
            if value is not None and not carried_by_a_header(value):
                # Said without the value, a secret: it goes in a header, which cannot carry it as it is.
                variable = "SHOP_CONTRACT_" + flag[2:].upper().replace("-", "_")
                raise UsageError(
                    f"{flag} is empty, or has a space at an end, a control or a non-ASCII character: a header"
                    f" cannot carry it (check the variable it comes from, e.g. {variable})"
                )
        if self.token and self.token_url:
            raise UsageError("give either --token or --token-url, not both")
        if self.profile not in PROFILES:
            raise UsageError(f"unknown profile {self.profile!r}; choose from {', '.join(PROFILES)}")
        if self.max_examples is not None and self.max_examples < 1:
            raise UsageError("--max-examples must be at least 1")
        if self.workers is not None and not 1 <= self.workers <= MAX_WORKERS:
            raise UsageError(f"--workers must be 'auto' or a whole number from 1 to {MAX_WORKERS}")
        if not 1 <= self.race_tries <= MAX_RACE_TRIES:
            raise UsageError(f"--race-tries must be a whole number from 1 to {MAX_RACE_TRIES}")
        if self.max_time is not None and not 0 < self.max_time <= MAX_TIME:
            raise UsageError(f"--max-time must be more than 0 and at most {MAX_TIME:g} seconds")
        unknown = set(self.strict_checks) - set(STRICT_CHECKS)
        if unknown:
            raise UsageError(f"unknown strict check(s) {sorted(unknown)}; choose from {', '.join(STRICT_CHECKS)}")
        if not self.domain and not self.conformance:
            raise UsageError("--no-domain and --no-conformance together leave nothing to test")
        if not 0 < self.request_timeout <= MAX_TIME:  # Also refuses nan and inf, which no clock can add.
            raise UsageError(f"--request-timeout must be more than 0 and at most {MAX_TIME:g} seconds")
        if self.max_response_size < 1:
            raise UsageError("--max-response-size must be at least 1 byte")
        if not 0 <= self.wait <= MAX_TIME:
            raise UsageError(f"--wait must be from 0 to {MAX_TIME:g} seconds")
        for flag, names in (("--checks", self.checks), ("--exclude-checks", self.exclude_checks)):
            unknown = set(names) - set(ALL_CHECKS)
            if unknown:
                known = ", ".join(ALL_CHECKS)
                raise UsageError(f"unknown check(s) for {flag}: {', '.join(sorted(unknown))}; known: {known}")
        if self.checks and not set(self.checks) - set(self.exclude_checks):
            raise UsageError("--checks and --exclude-checks together leave no check to run")
        if self.ca_bundle is not None and not self.ca_bundle.is_file():
            what = "not a regular file" if self.ca_bundle.exists() else "no such file"
            raise UsageError(f"--ca-bundle {self.ca_bundle}: {what}")
        if self.ca_bundle is not None and self.insecure:
            raise UsageError("give either --ca-bundle or --insecure, not both")
        if self.consumer is not None:
            self._validate_consumer()
        if self.shard is not None and not 1 <= self.shard.index <= self.shard.count:
            raise UsageError(f"--shard needs K/N with 1 <= K <= N, got {self.shard}")
        self._validate_outputs()
        self._validate_baseline()

    def _validate_outputs(self) -> None:
        """Where the reports go, checked before the run, so that a run of minutes does not end in one line
        saying its reports had no place."""
        for flag, directory in (("--report-dir", self.report_dir), ("--export-tests", self.export_tests)):
            if directory is not None and directory.exists() and not directory.is_dir():
                raise UsageError(f"{flag} {directory}: not a directory")
        if self.junit_xml is not None and self.junit_xml.is_dir():
            raise UsageError(f"--junit-xml {self.junit_xml}: is a directory")

    def _validate_baseline(self) -> None:
        """The baseline's flags need its file. Pruning needs a run that can tell what no longer reproduces."""
        flags = {"--baseline-update": self.baseline_update, "--baseline-prune": self.baseline_prune}
        flags["--baseline-strict"] = self.baseline_strict
        given = [flag for flag, used in flags.items() if used]
        if given and self.baseline is None:
            raise UsageError(f"{', '.join(given)} need(s) --baseline FILE")
        narrowing = [*self.narrowing, *(["--shard"] if self.shard is not None else [])]
        if self.baseline_prune and narrowing:
            raise UsageError(f"--baseline-prune needs a whole run, not one narrowed by {', '.join(narrowing)}")

    def _validate_consumer(self) -> None:
        """`--consumer` replays a recording. What shapes generated tests does not apply, and the refusal says so."""
        unused = {
            "--include": bool(self.include),
            "--shard": self.shard is not None,
            "--max-examples": self.max_examples is not None,
            "--strict / --strict-check": self.strict or bool(self.strict_checks),
            "--workers": self.workers not in (None, 1),
            "--no-domain / --no-conformance": not (self.domain and self.conformance),
        }
        given = [flag for flag, used in unused.items() if used]
        if given:
            raise UsageError(
                f"not with --consumer (a recorded contract is replayed, nothing generated): {', '.join(given)}"
            )

    @property
    def examples(self) -> int:
        return self.max_examples if self.max_examples is not None else PROFILES[self.profile].max_examples

    @property
    def stateful_steps(self) -> int:
        return PROFILES[self.profile].stateful_steps

    @property
    def coverage_phase(self) -> bool:
        return PROFILES[self.profile].coverage

    @property
    def enabled_strict(self) -> frozenset[str]:
        strict = frozenset(STRICT_CHECKS) if self.strict else frozenset(self.strict_checks)
        return frozenset(name for name in strict if self.selects(name))

    @property
    def part(self) -> Shard:
        """The shard this run is. The whole run is 1/1."""
        return self.shard or WHOLE

    @property
    def narrowing(self) -> tuple[str, ...]:
        """The options given that narrow the run's scope, a shard aside. A run with none is whole."""
        given = {
            "--include": bool(self.include),
            "--checks": bool(self.checks),
            "--exclude-checks": bool(self.exclude_checks),
            "--no-domain": not self.domain,
            "--no-conformance": not self.conformance,
            "--consumer": self.consumer is not None,
        }
        return tuple(flag for flag, narrows in given.items() if narrows)

    def selects(self, check: str) -> bool:
        """Whether `check` is judged in this run (`--checks`, `--exclude-checks`)."""
        return (not self.checks or check in self.checks) and check not in self.exclude_checks
