"""What a burst of requests sent at the same instant saw. client/together.py sends it.

It holds each request with when it went and when its answer came, and whether they overlapped. The
burst *overlapped* when every request was on the wire, its first byte written, before the first byte
of any answer came. Only then could the target have served them side by side. It is plain data, so
that the judging reads it without the sending.
"""

from __future__ import annotations

from dataclasses import dataclass

import httpx

from contract_tests.client.pacing import OVERLOADED


@dataclass(frozen=True)
class Timed:
    """One request of a burst and its answer, with when each went (monotonic seconds)."""

    request: httpx.Request
    response: httpx.Response
    sent: float
    answered: float


@dataclass(frozen=True)
class Burst:
    """The requests of one try, in the order given."""

    timed: tuple[Timed, ...]

    @property
    def overlapped(self) -> bool:
        """Every request was on the wire before the first answer arrived."""
        return max(each.sent for each in self.timed) < min(each.answered for each in self.timed)

    @property
    def overloaded(self) -> int:
        """The first 429 or 503 among the answers, or 0 for none. The pacer waits it out and sends the burst again."""
        return next((each.response.status_code for each in self.timed if each.response.status_code in OVERLOADED), 0)

    def retry_after(self) -> str | None:
        overloaded = [each.response for each in self.timed if each.response.status_code in OVERLOADED]
        return overloaded[0].headers.get("Retry-After") if overloaded else None

    def split(self, sizes: list[int]) -> list[Burst]:
        """The burst cut into consecutive parts of `sizes` requests, one per try of a wave (client/together.py)."""
        parts, start = [], 0
        for size in sizes:
            parts.append(Burst(self.timed[start : start + size]))
            start += size
        return parts

    def timeline(self) -> list[str]:
        """Each request with when it was sent and answered, in ms from the first send."""
        start = min(each.sent for each in self.timed)
        return [
            f"{each.request.method} {each.request.url.path} sent +{(each.sent - start) * 1000:.1f} ms, "
            f"answered {each.response.status_code} +{(each.answered - start) * 1000:.1f} ms"
            for each in self.timed
        ]
