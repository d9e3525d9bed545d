"""API coverage: how much of the contract a run exercised, per operation and as one figure.

The operations under test are each surface's operations, narrowed by `--include`. Per operation, it
holds:

- the response statuses the contract documents, and those the target answered;
- the parameters and top-level body fields the suite sent;
- the request media types it used;
- how many requests it made, and how many responses a check judged.

The documented side is copied from the spec when the run starts (outcome/documented.py). So a report,
and `shop-contract merge`, needs no spec to render it, and this module imports none.

The figure ("coverage of the contract", docs/report.md) counts documented responses. Each (surface,
operation, status) the spec lists is covered when the target answered that status to a request of the
run. A range such as `4XX` is covered by any status in it, and `default` is not counted. Requests to
operations outside the run's scope, such as setup and discovery, are not counted.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

UNDOCUMENTED = "default"
"""The response key that documents no status, so it is not counted."""


def covers(documented: str, status: int) -> bool:
    """Whether the response key `documented` ("200", "4XX") stands for `status`."""
    if len(documented) == 3 and documented[1:].upper() == "XX":
        return str(status)[0] == documented[0]
    return documented == str(status)


@dataclass
class OperationCoverage:
    """One operation on one surface: what the contract documents, and what the run exercised."""

    surface: str
    operation: str
    method: str
    path: str
    tag: str
    statuses: tuple[str, ...]
    parameters: tuple[str, ...]
    body_fields: tuple[str, ...]
    media_types: tuple[str, ...]
    seen_statuses: set[int] = field(default_factory=set)
    sent_parameters: set[str] = field(default_factory=set)
    sent_fields: set[str] = field(default_factory=set)
    used_media_types: set[str] = field(default_factory=set)
    requests: int = 0
    validated: int = 0
    """Responses at least one check judged."""

    def covered_statuses(self) -> list[str]:
        return [key for key in self.statuses if any(covers(key, seen) for seen in self.seen_statuses)]

    def undocumented_statuses(self) -> list[int]:
        return sorted(seen for seen in self.seen_statuses if not any(covers(key, seen) for key in self.statuses))

    def as_json(self) -> dict[str, Any]:
        covered = self.covered_statuses()
        return {
            "surface": self.surface,
            "operation": self.operation,
            "method": self.method,
            "path": self.path,
            "tag": self.tag,
            "statuses": {
                "documented": list(self.statuses),
                "seen": covered,
                "never_seen": [key for key in self.statuses if key not in covered],
                "undocumented_seen": self.undocumented_statuses(),
                "answered": sorted(self.seen_statuses),
            },
            "parameters": {"documented": list(self.parameters), "exercised": sorted(self.sent_parameters)},
            "body_fields": {"documented": list(self.body_fields), "exercised": sorted(self.sent_fields)},
            "media_types": {"documented": list(self.media_types), "used": sorted(self.used_media_types)},
            "requests": self.requests,
            "validated": self.validated,
        }

    @classmethod
    def from_json(cls, entry: dict[str, Any]) -> OperationCoverage:
        return cls(
            surface=entry["surface"],
            operation=entry["operation"],
            method=entry["method"],
            path=entry["path"],
            tag=entry["tag"],
            statuses=tuple(entry["statuses"]["documented"]),
            parameters=tuple(entry["parameters"]["documented"]),
            body_fields=tuple(entry["body_fields"]["documented"]),
            media_types=tuple(entry["media_types"]["documented"]),
            seen_statuses={int(status) for status in entry["statuses"]["answered"]},
            sent_parameters=set(entry["parameters"]["exercised"]),
            sent_fields=set(entry["body_fields"]["exercised"]),
            used_media_types=set(entry["media_types"]["used"]),
            requests=int(entry["requests"]),
            validated=int(entry["validated"]),
        )


@dataclass(frozen=True)
class Sent:
    """What one request exercised: its parameters (`in:name`), its top-level body fields and its media type."""

    parameters: frozenset[str] = frozenset()
    fields: frozenset[str] = frozenset()
    media_type: str | None = None


@dataclass
class Coverage:
    """Every operation in the run's scope, by (surface, operation id)."""

    operations: dict[tuple[str, str], OperationCoverage] = field(default_factory=dict)

    def sent(self, surface: str, operation: str, status: int | None, sent: Sent) -> None:
        """One request of the run and the status it got, None for no whole answer. Out of scope, it is ignored."""
        entry = self.operations.get((surface, operation))
        if entry is None:
            return
        entry.requests += 1
        if status is not None:
            entry.seen_statuses.add(status)
        entry.sent_parameters |= set(sent.parameters) & set(entry.parameters)
        entry.sent_fields |= set(sent.fields) & set(entry.body_fields)
        if sent.media_type:
            entry.used_media_types.add(sent.media_type.split(";")[0].strip().lower())

    def judged(self, surface: str, operation: str) -> None:
        """A response of `operation` a check judged."""
        entry = self.operations.get((surface, operation))
        if entry is not None:
            entry.validated += 1

    def planned(self) -> Coverage:
        """The same scope with nothing observed yet. It is the coverage of a part of the run done alongside."""
        return Coverage(
            {
                key: replace(
                    entry,
                    seen_statuses=set(),
                    sent_parameters=set(),
                    sent_fields=set(),
                    used_media_types=set(),
                    requests=0,
                    validated=0,
                )
                for key, entry in self.operations.items()
            }
        )

    def add(self, other: Coverage) -> None:
        """Add `other`'s observations, from another shard of the same run."""
        for key, theirs in other.operations.items():
            mine = self.operations.get(key)
            if mine is None:
                self.operations[key] = OperationCoverage.from_json(theirs.as_json())
                continue
            mine.seen_statuses |= theirs.seen_statuses
            mine.sent_parameters |= theirs.sent_parameters
            mine.sent_fields |= theirs.sent_fields
            mine.used_media_types |= theirs.used_media_types
            mine.requests += theirs.requests
            mine.validated += theirs.validated

    def figure(self) -> tuple[int, int]:
        """(documented responses seen, documented responses) over the run's scope."""
        seen = sum(len(entry.covered_statuses()) for entry in self.operations.values())
        return seen, sum(len(entry.statuses) for entry in self.operations.values())

    def headline(self) -> str:
        seen, documented = self.figure()
        if not documented:
            return "Coverage of the contract: no operation in this run's scope"
        return (
            f"Coverage of the contract: {seen} of {documented} documented responses seen ({percent(seen, documented)})"
        )

    def as_json(self) -> dict[str, Any]:
        seen, documented = self.figure()
        return {
            "documented_responses": documented,
            "seen_responses": seen,
            "percent": round(100 * seen / documented, 1) if documented else None,
            "operations": [self.operations[key].as_json() for key in sorted(self.operations)],
        }

    @classmethod
    def from_json(cls, document: dict[str, Any]) -> Coverage:
        entries = (OperationCoverage.from_json(entry) for entry in document["operations"])
        return cls({(entry.surface, entry.operation): entry for entry in entries})


def percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "n/a"
