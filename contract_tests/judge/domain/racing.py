"""The tries of a race and their verdict, shared by the checks of concurrent writes
(races.py, race_references.py).

A race is tried up to `Context.race_tries` times (`--race-tries`), in waves of `wave_size` tries.
- The wave's items are made at once.
- Its tries' bursts go out as one (`Together.send_each`).
- Its reads and its cleanup go out at once (`at_once`).

One try after the other cost a run most of its time behind a network. A wave costs the round trips of
one try.

Each try still races on its own item. Only a try whose own requests were all on the wire before the
first answer to any of them came is judged (`Burst.overlapped`, client/burst.py).

Before any try, the target is probed once a surface (client/arrival.py). One that takes requests one at a
time (one worker, a proxy serialising requests) lets no two meet on the server, although each burst was on
the wire at once. Every check of concurrent writes is then not exercised there. Behind a proxy reading
whole requests first, whether two met on the server cannot be seen: a race found is reported, and a check
finding none is not exercised, never passed.

The tries are judged in order. They stop at the end of the wave holding the first evidence plus
`FREQUENCY_TRIES` more, to say how often it happens ("Broken in 3 of 10 overlapped tries"). With no
overlapped try, the check is listed as not exercised ("no overlap observed"), never passed. A race that
was not run proves nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import httpx

from contract_tests.client.bounded import Limits
from contract_tests.client.burst import Burst
from contract_tests.judge.domain.data import Context
from contract_tests.judge.domain.http import Exchange, Session
from contract_tests.outcome.coverage import Sent
from contract_tests.outcome.standalone import AT_ONCE
from contract_tests.spec import JSON, Collection, Operation

FREQUENCY_TRIES = 9
"""Tries after the first evidence, to tell how often the race is lost. It is bounded, since the run's time
matters."""
WAVE = 8
"""Tries sent together at most. A wave's burst is 2 or 3 times as many requests, past the pacer's limit as
every burst is. So it stays a load that a service taking several clients at once serves."""


@dataclass(frozen=True)
class Try:
    """One try: its burst, the read that judges it, what it broke, and the requests that made the state it
    started from. `broken` is None when the rule held. A try counts only if its burst overlapped."""

    burst: Burst
    read: Exchange
    broken: str | None
    setup: Sequence[Exchange] = ()


Wave = Callable[[range], "Sequence[Try | None]"]
"""The tries numbered `numbers`, made together, in their order. A None means that try could not be made,
and then the tries stop."""


class Together(Protocol):
    """Requests sent at the same instant, as one turn of the pacer. The checks make a
    `client.together.Together`. It is named here by what it does, so that the judging needs no client
    module."""

    def send(self, requests: Sequence[httpx.Request]) -> Burst: ...


@dataclass(frozen=True)
class Call:
    """A request of a wave's reads, setup or cleanup. It is `op` at `params`, with its query and content."""

    op: Operation
    params: dict[str, Any]
    query: dict[str, Any] | None = None
    content: dict[str, Any] | None = None


def wave_size(tries: int) -> int:
    """Tries in a wave. That is `WAVE`, or fewer when fewer are asked for."""
    return max(1, min(WAVE, tries))


def documented(op: Operation) -> set[int]:
    """The statuses `op` documents. A race's answer outside them breaks the contract."""
    return {int(status) for status in op.definition.get("responses", {}) if status.isdigit()}


def request(
    session: Session, op: Operation, params: dict[str, Any], query: dict[str, Any] | None = None, **content: Any
) -> httpx.Request:
    """`op` at `params` with the surface's current credentials, built as `Session.call` builds it."""
    headers = session.surface.headers
    if session.keyring is not None:
        headers = session.keyring.current(headers)
    url = session.url(op, params)
    built = session.sender.build_request(op.method.upper(), url, params=query, headers=headers, **content)
    built.read()
    return built


def at_once(session: Session, together: Together, calls: Sequence[Call]) -> list[Exchange]:
    """`calls` sent at the same instant (one turn of the pacer), each then counted as `Session.call` counts
    one. An answer refused for credentials renewed meanwhile is sent again by `Session.call`."""
    if not calls:
        return []
    sent = [request(session, call.op, call.params, call.query, **(call.content or {})) for call in calls]
    burst = together.send(sent)
    exchanges = []
    own = session.surface.headers
    for call, each in zip(calls, burst.timed, strict=True):
        exchange = Exchange(each.request, each.response)
        session.heard(call.op, exchange, call.query, call.content or {})
        status = each.response.status_code
        if session.keyring is not None and session.keyring.answered(each.request.headers, status, own):
            exchange = session.call(call.op, call.params, query=call.query, **(call.content or {}))
        exchanges.append(exchange)
    return exchanges


def counted(session: Session, ops: Sequence[Operation], burst: Burst) -> None:
    """A burst's requests in the coverage, each as its operation's."""
    for op, each in zip(ops, burst.timed, strict=True):
        media = each.request.headers.get("content-type")
        sent = Sent(frozenset(f"path:{name}" for name in op.path_parameters), frozenset(), media)
        session.ledger.coverage.sent(session.surface.name, op.id, each.response.status_code, sent)


def server_errors(burst: Burst) -> str | None:
    """The answers of a burst that are 5xx, in words, or None when there are none."""
    failed = [each for each in burst.timed if each.response.status_code >= 500]
    if not failed:
        return None
    shown = ", ".join(f"{each.request.method} answered {each.response.status_code}" for each in failed)
    return f"sent at the same instant, {shown} (never a 5xx)"


def renewed(session: Session, burst: Burst) -> bool:
    """Whether a request of `burst` was refused for credentials that are renewed now (an expired token).
    Such a try is not judged, as `Session.call` sends such a request again."""
    if session.keyring is None:
        return False
    own = session.surface.headers  # A list, not a generator, so the keyring notes every answer (401s in a row).
    return any([session.keyring.answered(each.request.headers, each.response.status_code, own) for each in burst.timed])


class Arrival(Protocol):
    """What the arrival probe saw (client/arrival.py), named here by what the judging reads of it."""

    @property
    def side_by_side(self) -> bool | None: ...

    @property
    def seen(self) -> str: ...

    @property
    def takes_a_wave(self) -> bool | None: ...

    @property
    def buffered(self) -> bool | None: ...


Probe = Callable[[httpx.Request, httpx.Request, Limits], Arrival]
"""The arrival probe (`client.arrival.probed`): whether the target answers a read while another request
is arriving, given the read and a create of one collection."""


def one_at_a_time(session: Session, check: str, op: Operation, collection: Collection, probe: Probe) -> bool:
    """Whether the target takes requests one at a time, asked of `probe` once a surface with `collection`'s
    list and create. `check` is then listed as not exercised at `op`: no try could race."""

    def probed() -> Arrival:  # Its requests are built only the first time, when the probe runs.
        return probe(request(session, collection.list_op, {}), request(session, collection.create, {}), session.limits)

    seen = session.once("arrival", probed)
    if seen.side_by_side is not False:
        return False
    session.ledger.skipped(session.surface.name, op.id, check, f"no overlap observed: {seen.seen}")
    return True


def staggered(session: Session) -> bool:
    """Whether a wave's tries go out one after the other (client/together.py): unless the target, probed
    by `one_at_a_time` before any check ran, answered while a whole wave was arriving."""
    return _arrival(session).takes_a_wave is not True


def _arrival(session: Session) -> Arrival:
    """What the probe saw of this surface's target, asked by `one_at_a_time` before any check ran."""
    return session.once("arrival", _probed_before)


def _probed_before() -> Arrival:
    raise AssertionError("the checks of concurrent writes run after one_at_a_time probed the target")


def race(session: Session, check: str, op: Operation, tries: int, wave: Wave) -> None:
    """Try `wave` until `tries` tries are made, `wave_size` at a time, and record the verdict on `op`."""
    overlapped: list[Try] = []
    hits: list[Try] = []
    made = 0
    size = wave_size(tries)
    for start in range(0, tries, size):
        made_all = True
        for done in wave(range(start, min(tries, start + size))):
            if done is None:
                made_all = False
                break
            made += 1
            if not done.burst.overlapped or renewed(session, done.burst):
                continue
            overlapped.append(done)
            if done.broken is not None:
                hits.append(done)
        if not made_all or (hits and len(overlapped) - overlapped.index(hits[0]) > FREQUENCY_TRIES):
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
        arrival = _arrival(session)
        if arrival.buffered:  # The tries met at a proxy. A race found there is real, one not found proves nothing.
            session.ledger.skipped(session.surface.name, op.id, check, f"no overlap observed: {arrival.seen}")
        else:
            session.judge(check, op, overlapped[-1].read, None)
        return
    first = hits[0]
    frequency = f"Broken in {len(hits)} of {len(overlapped)} overlapped tries ({made} tries sent)"
    timeline = "; ".join(first.burst.timeline())
    # The first line names the defect, and the fingerprint reads it. What a try broke, which field was lost
    # or which status came, depends on which request the target served last. So it goes on the next line.
    broken = f"{frequency} of writes sent at the same instant\n{first.broken}. {AT_ONCE}{timeline}"
    racers = [Exchange(each.request, each.response) for each in first.burst.timed]
    session.judge(check, op, first.read, broken, [*first.setup, *racers])


def planned(ctx: Context, collection: Collection, count: int) -> list[tuple[dict[str, Any], JSON]]:
    """`count` new items of `collection`, each as its path parameters and body."""
    items = []
    for _ in range(count):
        identifier = ctx.fresh_identifier(collection)
        items.append(({collection.identifier: identifier}, ctx.valid_body(collection, identifier)))
    return items


def made(
    session: Session, together: Together, check: str, op: Operation, collection: Collection, bodies: list[JSON]
) -> list[Exchange] | None:
    """The items of `bodies` created at once. When the target refused one, the answer is None and `check` is
    listed as not exercised at `op` (as `Session.create_for` does). Deleting them is the caller's job, made
    or not."""
    created = at_once(session, together, [Call(collection.create, {}, content={"json": body}) for body in bodies])
    refused = [each.status for each in created if each.status != 201]
    if not refused:
        return created
    reason = f"the items to race on could not be created (HTTP {refused[0]})"
    session.ledger.skipped(session.surface.name, op.id, check, reason)
    return None
