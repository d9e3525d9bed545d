"""Accepted findings (`--baseline FILE`), so that a run fails only on the violations a team has not accepted.

Each entry accepts one defect by its fingerprint, with a reason and an optional last day.

The file is reviewed in pull requests, so it is always written in one stable layout. It is YAML with
one entry per defect, sorted by fingerprint, so the same entries are always the same bytes.
`--baseline-update` adds what a run found and the file lacks. `--baseline-prune` drops what a
complete whole run did not reproduce. Both keep every reason and replace the file at once.

The file is input like any other, so it is read the way findings.json is. Its bytes are bounded
first. Then a walk over YAML's events bounds its depth and items before anything is composed. The
walk refuses an anchor, an alias or a tag where it meets one, so there is no alias bomb and no
object. Last, the document must be valid against baseline.schema.json, name a known check in each
fingerprint and hold real dates. Every refusal is one line that names the field by a JSON pointer
and never quotes the value.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from contract_tests.check_names import ALL_CHECKS
from contract_tests.options import Options
from contract_tests.outcome import files
from contract_tests.outcome.findings import Acceptance, BaselineRun, Ledger, Violation
from contract_tests.outcome.findings_file import pointer, said, schema
from contract_tests.outcome.fingerprint import fingerprint
from contract_tests.redact import Redactor, escape
from contract_tests.usage import UsageError
from shop_contract.files import TooLarge, read_at_most

SCHEMA_NAME = "baseline.schema.json"
VERSION = 1
PLACEHOLDER = "TODO: why accepted"
"""The reason `--baseline-update` gives a new entry: a reviewer sees at once that none was written."""
HEADER = """\
# Accepted findings of shop-contract (--baseline FILE): a run fails only on violations not listed here.
# One entry per defect, sorted by fingerprint (as findings.json and the reports show it). Review each
# reason; `expires: YYYY-MM-DD` is the last day an entry accepts anything. --baseline-update adds what
# is new, --baseline-prune drops what a complete whole run did not reproduce; both keep the reasons
# (and rewrite the file: comments other than this one are not kept).
"""
_FINGERPRINT = re.compile(r"(?P<surface>[^\s:]+) (?P<operation>\S+) (?P<check>[^\s:]+):")
_LONGEST_NUMBER = 100
"""Digits a plain YAML number may have: Python refuses to make an int of more than 4,300."""
_SHOWN = 40
"""Characters of an unknown check name quoted in an error."""


class BaselineError(UsageError):
    """The baseline cannot be read or written: one line naming the file and the field."""

    def __init__(self, path: Path, pointer: str, problem: str) -> None:
        where = f" at {pointer}" if pointer else ""
        super().__init__(f"--baseline {path}{where}: {problem}")


@dataclass(frozen=True)
class Gate:
    """A baseline read before a run, with what to do with it once the run is over."""

    path: Path
    entries: tuple[Acceptance, ...]
    update: bool = False
    prune: bool = False
    strict: bool = False


def gate_of(options: Options) -> Gate | None:
    """The baseline the options name, read (BaselineError if it is not a valid one); None without one."""
    if options.baseline is None:
        return None
    return open_gate(
        options.baseline, update=options.baseline_update, prune=options.baseline_prune, strict=options.baseline_strict
    )


def open_gate(path: Path, *, update: bool = False, prune: bool = False, strict: bool = False) -> Gate:
    """Read `path` as a baseline. A missing file is an empty one when `update` will write it."""
    entries = () if update and not path.exists() else read(path)
    return Gate(path, entries, update=update, prune=prune, strict=strict)


def read(path: Path) -> tuple[Acceptance, ...]:
    """The entries of the baseline in `path`, in the file's order. Raises BaselineError if it is not valid."""
    limit = schema(SCHEMA_NAME)["x-max-bytes"]
    try:
        raw = read_at_most(path, limit)
    except TooLarge as exc:
        raise BaselineError(path, "", str(exc.strerror)) from None
    except OSError as exc:
        hint = " (record one with --baseline-update)" if isinstance(exc, FileNotFoundError) else ""
        raise BaselineError(path, "", f"cannot read it: {exc.strerror or exc}{hint}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BaselineError(path, "", f"not UTF-8 (byte {exc.start})") from None
    return parse(text, path)


def parse(text: str, path: Path) -> tuple[Acceptance, ...]:
    """The entries of a baseline's `text`. Errors name `path`, where the text was read."""
    rules = schema(SCHEMA_NAME)
    try:
        _walk(yaml.parse(text, Loader=_Loader), rules["x-max-depth"], rules["x-max-items"])
        document = yaml.load(text, Loader=_Loader)  # A SafeLoader, so it builds no object.
    except _Refused as exc:
        raise BaselineError(path, pointer(exc.path), exc.problem) from None
    except yaml.YAMLError as exc:
        raise BaselineError(path, "", f"not YAML ({_yaml_problem(exc)})") from None
    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(rules).iter_errors(document))
    if error is not None:
        where, problem = said(error, rules["x-document"])
        raise BaselineError(path, pointer(where), problem)
    entries = tuple(Acceptance(e["fingerprint"], e["reason"], e.get("expires")) for e in document["accepted"])
    first: dict[str, int] = {}
    for number, entry in enumerate(entries):
        at = f"/accepted/{number}"
        check = _check(entry.fingerprint)
        if check not in ALL_CHECKS:
            raise BaselineError(path, f"{at}/fingerprint", f"names no check of the suite: {escape(check[:_SHOWN])}")
        if entry.expires is not None and _day(entry.expires) is None:
            raise BaselineError(path, f"{at}/expires", "not a date of the calendar (YYYY-MM-DD)")
        if entry.fingerprint in first:
            raise BaselineError(path, f"{at}/fingerprint", f"the same defect as /accepted/{first[entry.fingerprint]}")
        first[entry.fingerprint] = number
    return entries


def dumps(entries: Iterable[Acceptance]) -> str:
    """The file's text for `entries`, in one layout and sorted, so the same entries are the same bytes."""
    accepted: list[dict[str, Any]] = []
    for entry in sorted(entries, key=lambda e: e.fingerprint):
        item: dict[str, Any] = {"fingerprint": entry.fingerprint, "reason": entry.reason}
        if entry.expires is not None:
            item["expires"] = date.fromisoformat(entry.expires)  # A date is written plain, as 2027-01-31.
        accepted.append(item)
    body = yaml.safe_dump(
        {"version": VERSION, "accepted": accepted},
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=False,
        width=1_000_000,  # One line per value, because a folded fingerprint makes a noisy diff.
    )
    return HEADER + body


def write(path: Path, entries: Iterable[Acceptance]) -> None:
    """Replace `path` with `entries` at once, so a reader or a crash never sees half a file.

    outcome/files.py writes a temporary file beside it and renames it. What could not be read back is
    not written (BaselineError)."""
    text = dumps(entries)
    parse(text, path)
    path.parent.mkdir(parents=True, exist_ok=True)
    files.write(path, text.encode("utf-8"))


def today() -> date:
    """The day an entry's expiry is judged on. It is UTC's, so it is the same on every runner."""
    return datetime.now(UTC).date()


def expired(entry: Acceptance, on: date) -> bool:
    """Whether `entry` is past its last day on the day `on`."""
    day = None if entry.expires is None else _day(entry.expires)
    return day is not None and day < on


def shown_fingerprint(ledger: Ledger, violation: Violation) -> str:
    """`violation`'s fingerprint with secrets masked, as the reports show it and a baseline holds it."""
    return Redactor(ledger.secrets)(fingerprint(violation))


def apply(ledger: Ledger, path: Path, entries: Iterable[Acceptance], *, strict: bool = False, on: date) -> None:
    """Split the ledger's violations into new ones and accepted ones, and list the entries at fault.

    The new ones stay in `violations`, and those a live entry accepts go to `ledger.baseline.accepted`.
    The expired entries are listed, and so are those nothing matched after a complete whole run."""
    entries = sorted(entries, key=lambda e: e.fingerprint)
    live = {entry.fingerprint for entry in entries if not expired(entry, on)}
    found = {shown_fingerprint(ledger, v) for v in ledger.violations}
    judged = ledger.whole and ledger.complete
    run = BaselineRun(str(path), entries, judged=judged, strict=strict)
    run.accepted = [v for v in ledger.violations if shown_fingerprint(ledger, v) in live]
    ledger.violations = [v for v in ledger.violations if shown_fingerprint(ledger, v) not in live]
    run.expired = [entry for entry in entries if expired(entry, on)]
    run.not_reproduced = [entry for entry in entries if judged and entry.fingerprint not in found]
    ledger.baseline = run


def settle(ledger: Ledger, gate: Gate, on: date | None = None) -> list[str]:
    """Apply `gate`'s baseline to the ledger, and return the lines that say what changed in the file.

    Before that it adds to the baseline (`update`) and prunes it (`prune`) as asked, and rewrites the
    file when either changed it. Only a complete whole run can tell what was fixed, so pruning after a
    narrowed or incomplete run raises BaselineError and leaves the file as it was. So does a file that
    cannot be written. Either way the ledger is first split by the file as it was."""
    on = today() if on is None else on
    entries = list(gate.entries)
    notes = []
    found = {shown_fingerprint(ledger, v): None for v in ledger.violations}  # In the order found.
    if gate.prune:
        if not (ledger.whole and ledger.complete):
            apply(ledger, gate.path, entries, strict=gate.strict, on=on)  # The reports still tell new from accepted.
            why = "narrowed" if not ledger.whole else "not complete"
            raise BaselineError(gate.path, "", f"not pruned: the run was {why}, it cannot tell what was fixed")
        kept = [entry for entry in entries if entry.fingerprint in found]
        if len(kept) < len(entries):
            notes.append(f"baseline {gate.path}: pruned {len(entries) - len(kept)} entry(ies) no longer reproduced")
        entries = kept
    if gate.update:
        known = {entry.fingerprint for entry in entries}
        added = [Acceptance(fp, PLACEHOLDER) for fp in found if fp not in known and _check(fp) in ALL_CHECKS]
        if added:
            notes.append(f"baseline {gate.path}: added {len(added)} entry(ies); write their reasons ({PLACEHOLDER!r})")
        entries += added
    if (gate.update or gate.prune) and (notes or not gate.path.exists()):
        try:
            write(gate.path, entries)
        except OSError as exc:
            apply(ledger, gate.path, gate.entries, strict=gate.strict, on=on)
            raise BaselineError(gate.path, "", f"cannot write it: {exc.strerror or exc}") from None
    apply(ledger, gate.path, entries, strict=gate.strict, on=on)
    return notes


def strict_failures(ledger: Ledger) -> list[str]:
    """What fails a run under `--baseline-strict` besides new violations, one line each.

    These are the entries a complete whole run did not reproduce, and the expired ones. The list is
    empty without the flag. The CLI's exit code and the pytest suite's `shop-contract::baseline` test
    both read it, so they agree."""
    run = ledger.baseline
    if run is None or not run.strict:
        return []
    lines = [f"not reproduced by this complete run: {entry.fingerprint}" for entry in run.not_reproduced]
    lines += [f"expired on {entry.expires}: {entry.fingerprint}" for entry in run.expired]
    return lines


def fails(ledger: Ledger) -> bool:
    """Whether the run fails the gate, by a new violation or by what `strict_failures` says."""
    return bool(ledger.violations or strict_failures(ledger))


def _check(fingerprint_text: str) -> str:
    match = _FINGERPRINT.match(fingerprint_text)
    return "" if match is None else match["check"]


def _day(text: str) -> date | None:
    try:
        return date.fromisoformat(text)
    except ValueError:
        return None


class _Loader(yaml.SafeLoader):
    """YAML's safe loader, with dates left as written, because the schema and `_day` judge them."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_DECIMAL = re.compile(r"[-+]?[0-9][0-9_]*")
"""A plain scalar that YAML reads as a decimal integer. int() refuses one of more than 4,300 digits."""


class _Refused(Exception):
    def __init__(self, path: list[str | int], problem: str) -> None:
        super().__init__(problem)
        self.path, self.problem = path, problem


def _walk(events: Iterable[yaml.Event], depth: int, items: int) -> None:
    """Refuse a document that a reader should not compose, from YAML's events alone.

    Reading events needs no recursion and builds nothing. The walk refuses nesting deeper than `depth`,
    more than `items` members, an anchor, an alias, a tag, a key given twice, a key that is not a
    scalar, and a number too long to read. `_Refused` carries where."""
    path: list[str | int] = []
    waiting_key: list[bool] = []  # Per open collection, whether it is a mapping whose next node is a key.
    keys: list[set[str]] = []
    counted = 0
    for event in events:
        if not isinstance(event, yaml.NodeEvent):
            if isinstance(event, yaml.CollectionEndEvent):
                path.pop()
                waiting_key.pop()
                keys.pop()
                _next(path, waiting_key)
            continue
        if isinstance(event, yaml.AliasEvent) or event.anchor is not None:
            raise _Refused(path, "an anchor or alias: a baseline is read without them")
        if getattr(event, "tag", None) not in (None, "!"):
            raise _Refused(path, "a YAML tag: a baseline is read without them")
        if path:
            counted += 1
            if counted > items:
                raise _Refused(path, f"more than {items} items")
        if waiting_key and waiting_key[-1]:
            if not isinstance(event, yaml.ScalarEvent):
                raise _Refused(path, "a key that is not text")
            if event.value in keys[-1]:
                raise _Refused([*path[:-1], event.value], "a key given twice")
            keys[-1].add(event.value)
            path[-1] = event.value
            waiting_key[-1] = False
            continue
        if isinstance(event, yaml.ScalarEvent):
            long_plain = event.style is None and event.implicit[0] and len(event.value) > _LONGEST_NUMBER
            if long_plain and _DECIMAL.fullmatch(event.value):
                raise _Refused(path, f"a number of more than {_LONGEST_NUMBER} digits")
            _next(path, waiting_key)
            continue
        if len(path) == depth:
            raise _Refused(path, f"nested deeper than {depth} levels")
        mapping = isinstance(event, yaml.MappingStartEvent)
        path.append("" if mapping else 0)
        waiting_key.append(mapping)
        keys.append(set())


def _next(path: list[str | int], waiting_key: list[bool]) -> None:
    """Move on after a value. A mapping waits for its next key, and a sequence counts to its next index."""
    if not path:
        return
    if isinstance(path[-1], int):
        path[-1] += 1
    else:
        waiting_key[-1] = True


def _yaml_problem(error: yaml.YAMLError) -> str:
    """A YAML error in a few words and where, never the text quoted."""
    mark = getattr(error, "problem_mark", None)
    problem = getattr(error, "problem", None) or type(error).__name__
    where = f", line {mark.line + 1} column {mark.column + 1}" if mark is not None else ""
    return f"{escape(str(problem))[:80]}{where}"
