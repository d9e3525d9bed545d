"""What a run generated, per part: the cases in a canonical form, and those timing kept from being sent.

Two runs of one seed generate the same cases (docs/ci-gate.md, "What a seed fixes"). The digests let two
runs' findings.json be compared without the cases themselves.
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass, field


@dataclass
class Generated:
    """What one part of a run generated, and the cases not sent because of timing.

    Each case is kept in a canonical form, in the order it was generated, by key. A key is an operation,
    or a part's one stream of calls. Two runs of one seed generate the same cases. `digest` lets them be
    compared without the cases.
    """

    cases: dict[str, list[str]] = field(default_factory=dict)
    not_sent: list[str] = field(default_factory=list)
    """"key #position: why" for each case that timing, not the seed, changed. Such a case was generated but
    not sent (the time budget), or its answer was the target's refusal after every retry (429/503)."""
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, key: str, case: str) -> int:
        """Record `case` after the others of `key`, and answer its position there."""
        with self._lock:
            stream = self.cases.setdefault(key, [])
            stream.append(case)
            return len(stream) - 1

    def unsent(self, key: str, position: int, why: str) -> None:
        with self._lock:
            self.not_sent.append(f"{key} #{position + 1}: {why}")

    def count(self) -> int:
        return sum(len(stream) for stream in self.cases.values())

    def digest(self) -> str:
        """sha256 over every key in order, each with its cases in the order they were generated."""
        digest = hashlib.sha256()
        for key in sorted(self.cases):
            digest.update(f"{key}\n".encode())
            for case in self.cases[key]:
                digest.update(f"\t{case}\n".encode("utf-8", "backslashreplace"))
        return digest.hexdigest()

    def as_json(self) -> dict[str, object]:
        return {"digest": self.digest(), "cases": self.count(), "not_sent": list(self.not_sent)}

    def merge(self, other: Generated) -> None:
        """Add the cases of `other`, recorded apart for the same part, as when a part's ledger is absorbed."""
        with self._lock:
            for key, stream in other.cases.items():
                self.cases.setdefault(key, []).extend(stream)
            self.not_sent += other.not_sent


def generated_digest(generated: dict[str, Generated]) -> str:
    """One sha256 over every part's digest, by part name. Two runs generated the same when they are equal."""
    digest = hashlib.sha256()
    for name in sorted(generated):
        digest.update(f"{name}\t{generated[name].digest()}\n".encode())
    return digest.hexdigest()
