"""Requests sent at the same instant (contract_tests/client/together.py) and the verdict of a race
(judge/domain/racing.py), on the mock over a real socket: each request on its own connection, their
overlap read from when each was sent and answered, a 429 waited out as the pacer does, the budget
kept, and a race never observed listed as not exercised, not passed."""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

import httpx
import pytest

from contract_tests.client import arrival
from contract_tests.client import together as together_module
from contract_tests.client.bounded import Limits
from contract_tests.client.bounded_httpx import BoundedHttpx
from contract_tests.client.burst import Burst, Timed
from contract_tests.client.pacing import BudgetSpent, Pacer
from contract_tests.client.surface import Surface
from contract_tests.client.together import STAGGER_S, Together
from contract_tests.judge.domain.http import Exchange, Session
from contract_tests.judge.domain.racing import WAVE, Try, one_at_a_time, race
from contract_tests.options import DEFAULT_MAX_RESPONSE_SIZE
from contract_tests.outcome.findings import Ledger
from contract_tests.spec import Spec
from mock_server.app import create_app
from mock_server.settings import DEFAULT_API_KEY, Settings
from tests.support.live import running
from tests.support.paced_targets import Logged, refuse

LINES = "/shop/api/v1/productlines/"
HOLD_S = 5.0


class Peers(Logged):
    """The mock, with the client's port of every request, and the first `refusals` answered 429. With `hold`,
    no request is answered before `hold` have arrived (at most HOLD_S): the target then lets them overlap,
    whatever the machine's scheduling of the client's threads."""

    def __init__(self, refusals: int = 0, hold: int = 0) -> None:
        super().__init__(create_app(Settings()))
        self.ports: list[int] = []
        self.refusals = refusals
        self.hold = hold
        self._arrived: asyncio.Event | None = None

    async def answer(self, scope: Any, receive: Any, send: Any) -> None:
        self.ports.append(scope["client"][1])
        if self.hold:
            self._arrived = self._arrived or asyncio.Event()  # made on the server's own loop
            if len(self.ports) >= self.hold:
                self._arrived.set()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._arrived.wait(), HOLD_S)
        if self.refusals:
            self.refusals -= 1
            await refuse(send, 429, b"0")
            return
        await self.app(scope, receive, send)


def lines(origin: str, count: int) -> list[httpx.Request]:
    return [httpx.Request("GET", origin + LINES, headers={"X-API-Key": DEFAULT_API_KEY}) for _ in range(count)]


def limits(pacer: Pacer) -> Limits:
    return Limits(5, DEFAULT_MAX_RESPONSE_SIZE, pacer=pacer)


def test_a_burst_goes_out_together_each_request_on_its_own_connection() -> None:
    target = Peers()
    with running(target) as origin, Together(limits(Pacer(1)), 3) as together:
        bursts = [together.send(lines(origin, 3)) for _ in range(3)]
    assert all(each.response.status_code == 200 for burst in bursts for each in burst.timed)
    assert len(set(target.ports)) == 3  # three connections, kept across the tries
    assert any(burst.overlapped for burst in bursts)  # past the pacer's limit of one: sent at once
    assert all(line.startswith(f"GET {LINES} sent +") for line in bursts[-1].timeline())


def test_a_waves_tries_go_out_staggered_each_tries_own_requests_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A wave's tries go out STAGGER_S apart, in their order, each try's requests after the same pause: a
    target with fewer workers than the wave's requests then takes each try's requests together."""
    slept: list[float] = []
    monkeypatch.setattr(together_module, "sleep", slept.append)
    target = Peers()
    with running(target) as origin, Together(limits(Pacer(1)), 6) as together:
        bursts = together.send_each([lines(origin, 2), lines(origin, 2), lines(origin, 2)])
    assert [len(burst.timed) for burst in bursts] == [2, 2, 2]
    assert sorted(slept) == [STAGGER_S, STAGGER_S, 2 * STAGGER_S, 2 * STAGGER_S]  # the first try's: none


def test_a_wave_to_a_target_taking_it_at_once_goes_out_unstaggered(monkeypatch: pytest.MonkeyPatch) -> None:
    slept: list[float] = []
    monkeypatch.setattr(together_module, "sleep", slept.append)
    with running(Peers()) as origin, Together(limits(Pacer(1)), 4, staggered=False) as together:
        bursts = together.send_each([lines(origin, 2), lines(origin, 2)])
    assert [len(burst.timed) for burst in bursts] == [2, 2] and slept == []


def test_a_burst_answered_429_is_waited_out_and_sent_again_as_one_turn_of_the_pacer() -> None:
    target = Peers(refusals=1)
    pacer = Pacer(1)
    with running(target) as origin, Together(limits(pacer), 2) as together:
        burst = together.send(lines(origin, 2))
    assert [each.response.status_code for each in burst.timed] == [200, 200]
    assert pacer.waits == 1 and len(target.ports) == 4


def test_no_burst_starts_past_the_budget() -> None:
    target = Peers()
    spent = limits(Pacer(1, stop_at=time.monotonic()))
    with running(target) as origin, Together(spent, 2) as together, pytest.raises(BudgetSpent):
        together.send(lines(origin, 2))
    assert target.ports == []


def one_after_the_other(origin: str) -> Burst:
    """Two requests, the second sent after the first was answered: what a try that did not overlap saw."""
    request = lines(origin, 1)[0]
    response = httpx.Response(200, request=request)
    return Burst((Timed(request, response, 1.0, 1.5), Timed(request, response, 2.0, 2.5)))


def test_a_race_never_observed_is_not_exercised_never_passed() -> None:
    spec = Spec.load()
    op = spec.operations["patch_product_line"]
    ledger = Ledger()
    limits_ = Limits(60, DEFAULT_MAX_RESPONSE_SIZE)
    with running(create_app(Settings())) as origin:
        surface = Surface("backend", origin + "/shop/api/v1", ("patch_product_line",), {}, {})
        session = Session(surface, ledger, BoundedHttpx(limits_))
        read = session.call(spec.operations["list_product_lines"])
        burst = one_after_the_other(origin)
        assert not burst.overlapped
        race(session, "concurrent_lost_update", op, 5, lambda numbers: [Try(burst, read, "lost") for _ in numbers])
        session.close()
    assert not ledger.violations and not any(key.check == "concurrent_lost_update" for key in ledger.passes)
    [skip] = [skip for skip in ledger.not_exercised if skip.check == "concurrent_lost_update"]
    assert skip.reason.startswith("no overlap observed in 5 tries")


def test_an_overlapped_try_that_broke_the_rule_is_a_violation_with_its_timeline_and_frequency() -> None:
    spec = Spec.load()
    op = spec.operations["patch_product_line"]
    ledger = Ledger()
    with running(create_app(Settings())) as origin:
        surface = Surface("backend", origin + "/shop/api/v1", ("patch_product_line",), {}, {})
        session = Session(surface, ledger, BoundedHttpx(Limits(60, DEFAULT_MAX_RESPONSE_SIZE)))
        read: Exchange = session.call(spec.operations["list_product_lines"])
        request = lines(origin, 1)[0]
        response = httpx.Response(200, request=request)
        together = Burst((Timed(request, response, 1.0, 1.5), Timed(request, response, 1.001, 1.4)))

        def tried(number: int) -> Try:
            return Try(together, read, "lost" if number % 2 else None)

        race(session, "concurrent_lost_update", op, 44, lambda numbers: [tried(n) for n in numbers])
        session.close()
    [violation] = ledger.violations
    # the first at try 2 (wave 1), 9 more: at the end of wave 2, the tries judged in order
    assert f"Broken in 8 of {2 * WAVE} overlapped tries ({2 * WAVE} tries sent)" in violation.rule
    assert "sent +1.0 ms, answered 200 +400.0 ms" in violation.rule


def test_a_wave_of_tries_goes_out_as_one_burst_each_try_judged_on_its_own_requests() -> None:
    """The tries of a wave (judge/domain/racing.py) are one burst: every request on its own connection, all
    sent before any answer, then cut back into the tries, in order, each with its overlap its own."""
    target = Peers(hold=6)  # a loaded machine may answer the first before the sixth is sent: not the point here
    with running(target) as origin, Together(limits(Pacer(1)), 6) as together:
        tries = together.send_each([lines(origin, 2) for _ in range(3)])
    assert [len(each.timed) for each in tries] == [2, 2, 2]
    assert len(set(target.ports)) == 6
    whole = Burst(tuple(timed for each in tries for timed in each.timed))
    assert whole.overlapped and all(each.overlapped for each in tries)


def test_a_race_is_tried_in_waves_and_stops_at_the_end_of_a_wave() -> None:
    """A wave of `WAVE` tries at once; a target that is right (no evidence) is tried to `tries`, no more."""
    spec = Spec.load()
    op = spec.operations["patch_product_line"]
    waves: list[range] = []
    with running(create_app(Settings())) as origin:
        surface = Surface("backend", origin + "/shop/api/v1", ("patch_product_line",), {}, {})
        session = Session(surface, Ledger(), BoundedHttpx(Limits(60, DEFAULT_MAX_RESPONSE_SIZE)))
        read = session.call(spec.operations["list_product_lines"])
        collection = next(each for each in spec.collections if each.list_op.id == "list_product_lines")
        assert not one_at_a_time(session, "concurrent_lost_update", op, collection, arrival.probed)
        request = lines(origin, 1)[0]
        response = httpx.Response(200, request=request)
        together = Burst((Timed(request, response, 1.0, 1.5), Timed(request, response, 1.001, 1.4)))

        def wave(numbers: range) -> list[Try]:
            waves.append(numbers)
            return [Try(together, read, None) for _ in numbers]

        race(session, "concurrent_lost_update", op, WAVE + 3, wave)
        session.close()
    assert waves == [range(0, WAVE), range(WAVE, WAVE + 3)]
