"""The tries of a race and their verdict, shared by the checks of concurrent writes
(races.py, race_references.py).

A race is tried up to `Context.race_tries` times (`--race-tries`); only a try whose requests all were
on the wire before the first answer came (`Burst.overlapped`, client/burst.py) is judged. The tries
stop at the first evidence, after up to `FREQUENCY_TRIES` more to say how often it happens ("Broken in
3 of 10 overlapped tries"). With no overlapped try the check is listed as not exercised ("no overlap
observed"), never passed: a race that was not run proves nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import httpx

from contract_tests.client.burst import Burst
from contract_tests.judge.domain.http import Exchange, Session
from contract_tests.outcome.coverage import Sent
from contract_tests.outcome.standalone import AT_ONCE
from contract_tests.spec import Operation

FREQUENCY_TRIES = 9
"""Tries after the first evidence, to tell how often the race is lost (bounded: the run's time matters)."""


@dataclass(frozen=True)
class Try:
    """One try: its burst, the read that judges it, what it broke (None: the rule held), and the requests
    that made the state it started from. It counts only if its burst overlapped."""

    burst: Burst
    read: Exchange
    broken: str | None
    setup: Sequence[Exchange] = ()


Attempt = Callable[[int], "Try | None"]
"""The `n`th try of a race; None when it could not be made (then the tries stop)."""


def request(session: Session, op: Operation, params: dict[str, Any], **content: Any) -> httpx.Request:
    """`op` at `params` with the surface's current credentials, built as `Session.call` builds it."""
    headers = session.surface.headers
    if session.keyring is not None:
        headers = session.keyring.current(headers)
    built = session.sender.build_request(op.method.upper(), session.url(op, params), headers=headers, **content)
    built.read()
    return built


def counted(session: Session, ops: Sequence[Operation], burst: Burst) -> None:
    """A burst's requests in the coverage, each as its operation's."""
    for op, each in zip(ops, burst.timed, strict=True):
        media = each.request.headers.get("content-type")
        sent = Sent(frozenset(f"path:{name}" for name in op.path_parameters), frozenset(), media)
        session.ledger.coverage.sent(session.surface.name, op.id, each.response.status_code, sent)


def server_errors(burst: Burst) -> str | None:
    """The answers of a burst that are 5xx, in words (None: none)."""
    failed = [each for each in burst.timed if each.response.status_code >= 500]
    if not failed:
        return None
    shown = ", ".join(f"{each.request.method} answered {each.response.status_code}" for each in failed)
    return f"sent at the same instant, {shown} (never a 5xx)"


def renewed(session: Session, burst: Burst) -> bool:
    """Whether a request of `burst` was refused for credentials that are renewed now (an expired token): the
    try is not judged, as `Session.call` sends such a request again."""
    if session.keyring is None:
        return False
    own = session.surface.headers  # a list, not a generator: the keyring notes every answer (401s in a row)
    return any([session.keyring.answered(each.request.headers, each.response.status_code, own) for each in burst.timed])


def race(session: Session, check: str, op: Operation, tries: int, attempt: Attempt) -> None:
    """Try `attempt` up to `tries` times and record the verdict on `op`."""
    overlapped: list[Try] = []
    hits: list[Try] = []
    made = 0
    for number in range(tries):
        done = attempt(number)
        if done is None:
            break
        made += 1
        if not done.burst.overlapped or renewed(session, done.burst):
            continue
        overlapped.append(done)
        if done.broken is not None:
            hits.append(done)
        if hits and len(overlapped) - overlapped.index(hits[0]) > FREQUENCY_TRIES:
            break
    verdict(session, check, op, made, overlapped, hits)


def verdict(session: Session, check: str, op: Operation, made: int, overlapped: list[Try], hits: list[Try]) -> None:
    if not overlapped:
        reason = (
            f"no overlap observed in {made} tries: each time the target answered a request before the others "
            "were on the wire (one worker, or a proxy serialising requests), so the race was not run"
        )
        session.ledger.skipped(session.surface.name, op.id, check, reason)
        return
    if not hits:
        session.judge(check, op, overlapped[-1].read, None)
        return
    first = hits[0]
    frequency = f"Broken in {len(hits)} of {len(overlapped)} overlapped tries ({made} tries sent)"
    timeline = "; ".join(first.burst.timeline())
    broken = f"{first.broken}. {frequency}. {AT_ONCE}{timeline}"
    racers = [Exchange(each.request, each.response) for each in first.burst.timed]
    session.judge(check, op, first.read, broken, [*first.setup, *racers])
