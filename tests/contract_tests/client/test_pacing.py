"""The pacer: how many requests are in flight, the waits a target asks for, the time budget."""

from __future__ import annotations

import datetime
import email.utils
import threading
import time
from dataclasses import dataclass, field

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contract_tests.client.pacing import (
    MAX_AUTO_WORKERS,
    MAX_WAIT,
    REFUSING,
    RETRIES,
    BudgetSpent,
    Pacer,
    origin_of,
    retry_after,
)

API = "https://api.example.test"
REALM = "http://127.0.0.1:8080"


@dataclass
class Answer:
    status: int
    wait: str | None = None


@dataclass
class Target:
    """Answers from a script, counting the requests and the most in flight at once."""

    script: list[Answer]
    seconds: float = 0.0
    sent: int = 0
    in_flight: int = 0
    most: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def send(self) -> Answer:
        with self.lock:
            self.sent += 1
            self.in_flight += 1
            self.most = max(self.most, self.in_flight)
            answer = self.script[min(self.sent, len(self.script)) - 1]
        time.sleep(self.seconds)
        with self.lock:
            self.in_flight -= 1
        return answer


def paced(pacer: Pacer, target: Target) -> Answer:
    return pacer.send(target.send, lambda answer: answer.status, lambda answer: answer.wait, API)


@pytest.mark.parametrize(
    ("value", "seconds"),
    [("2", 2.0), (" 0 ", 0.0), ("99999999999999", MAX_WAIT), ("-1", None), ("soon", None), ("", None), (None, None),
     ("1.5", None), ("\u202e7", None), ("9" * 5000, MAX_WAIT), ("   ", None), ("+3", None), ("1 2", None)],
)  # fmt: skip
def test_retry_after_reads_seconds_bounded_and_refuses_the_rest(value: str | None, seconds: float | None) -> None:
    assert retry_after(value) == seconds


@pytest.mark.parametrize("value", ["\u00b2", "\uff11", "\u0663", "1\u00b2", "\u00b9\u2070", "\U0001d7ce"])
def test_retry_after_reads_only_ascii_digits_as_seconds(value: str) -> None:
    """Superscripts, fullwidth, Arabic-Indic and mathematical digits pass `str.isdigit`; RFC 9110's
    delay-seconds is ASCII digits only. "²" made `int` raise, and the run ended in an internal error."""
    assert value.isdigit()
    assert retry_after(value) is None


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.text(),
        st.from_regex(r"\A\s*[0-9\u00b2\uff11\u0663+-]{0,30}\s*\Z"),
        st.builds(lambda when: email.utils.format_datetime(when), st.datetimes(timezones=st.just(datetime.UTC))),
    )
)
def test_retry_after_never_raises_and_stays_within_bounds(value: str) -> None:
    seconds = retry_after(value)
    assert seconds is None or 0.0 <= seconds <= MAX_WAIT


def test_retry_after_reads_an_http_date() -> None:
    now = time.time()
    assert retry_after(email.utils.formatdate(now + 5, usegmt=True), now) == pytest.approx(5, abs=1)
    assert retry_after(email.utils.formatdate(now - 60, usegmt=True), now) == 0
    assert retry_after(email.utils.formatdate(now + 10**6, usegmt=True), now) == MAX_WAIT


def test_an_overloaded_answer_is_waited_out_and_sent_again() -> None:
    pacer = Pacer(4)
    target = Target([Answer(503, "0"), Answer(429, "0"), Answer(200)])
    started = time.monotonic()
    assert paced(pacer, target).status == 200
    assert target.sent == 3 and pacer.waits == 2
    assert pacer.lowest_limit == 1  # halved twice from 4 (and grown back by one since)
    assert time.monotonic() - started < 1


def test_the_retry_after_wait_holds_every_request() -> None:
    pacer = Pacer(2)
    target = Target([Answer(503, "1"), Answer(200)])
    started = time.monotonic()
    assert paced(pacer, target).status == 200
    assert time.monotonic() - started >= 0.9


def test_a_target_that_keeps_refusing_gets_its_last_answer_judged_and_no_more_retries() -> None:
    pacer = Pacer(1)
    target = Target([Answer(503, "0")])
    for _ in range(REFUSING):
        assert paced(pacer, target).status == 503
    assert target.sent == REFUSING * (RETRIES + 1)
    assert paced(pacer, target).status == 503
    assert target.sent == REFUSING * (RETRIES + 1) + 1  # down, not busy: judged at once


def test_the_limit_holds_under_threads_and_grows_back_after_calm_answers() -> None:
    pacer = Pacer(3)
    target = Target([Answer(200)], seconds=0.02)
    threads = [threading.Thread(target=paced, args=(pacer, target)) for _ in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert target.most <= 3
    pacer._shrink()
    assert pacer.limit == 1
    for _ in range(5):
        paced(pacer, Target([Answer(200)]))
    assert pacer.limit == 3


def test_slow_answers_halve_the_limit_once_per_round_not_once_per_answer() -> None:
    pacer = Pacer(16)
    sent = time.monotonic()
    pacer._answered(0.1, False, API, sent)  # the fastest answer seen
    for _ in range(10):  # a burst: ten requests in flight all answered slowly
        pacer._answered(0.9, False, API, sent)
    assert pacer.limit == 8
    pacer._answered(0.9, False, API, time.monotonic())  # sent after the halving: the target is still slow
    assert pacer.limit == 4
    pacer._answered(0.9, False, API, time.monotonic())
    assert pacer.limit == 2 and pacer.lowest_limit == 2


@settings(max_examples=50, deadline=None)
@given(
    near=st.floats(0.001, 0.02),
    far=st.lists(st.floats(0.1, 0.3), min_size=50, max_size=200),
)
def test_a_near_origin_does_not_make_a_far_origins_answers_slow(near: float, far: list[float]) -> None:
    """A token endpoint on the suite's machine and an API across a network: the API's answers, however
    many and in whatever order within its usual spread, are judged against the API's fastest, not the
    token endpoint's, so the limit stays at its ceiling."""
    pacer = Pacer(16)
    pacer._answered(near, False, REALM, time.monotonic())
    for seconds in far:
        pacer._answered(seconds, False, API, time.monotonic())
    assert pacer.limit == 16 and pacer.lowest_limit == 16
    pacer._answered(1.5, False, API, time.monotonic())  # five times the API's fastest and more: queueing
    assert pacer.limit == 8


@pytest.mark.parametrize(
    ("url", "origin"),
    [("https://API.example.test/shop/api/v1/products/?page=2", "https://api.example.test"),
     ("http://127.0.0.1:8080/realms/shop/protocol/openid-connect/token", "http://127.0.0.1:8080"),
     ("http://[::1]:9000/a%2Fb", "http://[::1]:9000"),
     ("http://[::1", "http://[::1")],  # one `urlsplit` refuses: an origin of its own
)  # fmt: skip
def test_an_origin_is_the_scheme_host_and_port(url: str, origin: str) -> None:
    assert origin_of(url) == origin


@given(st.text())
def test_an_origin_is_read_off_any_text_without_raising(url: str) -> None:
    """A URL can be a target's (a `next` link): one `urlsplit` refuses is an origin of its own."""
    assert isinstance(origin_of(url), str)


def test_no_request_starts_once_the_budget_is_spent() -> None:
    pacer = Pacer(1, stop_at=time.monotonic() - 1)
    target = Target([Answer(200)])
    with pytest.raises(BudgetSpent):
        paced(pacer, target)
    assert target.sent == 0 and pacer.spent


def test_a_retry_after_past_the_budget_ends_at_the_budget() -> None:
    pacer = Pacer(1, stop_at=time.monotonic() + 0.5)
    started = time.monotonic()
    with pytest.raises(BudgetSpent):
        paced(pacer, Target([Answer(503, "20")]))
    assert time.monotonic() - started < 10  # the wait asked is 20 s: a wide margin for a loaded machine


@pytest.mark.parametrize(
    ("latency", "workers"), [(0.001, 1), (0.019, 1), (0.05, 5), (0.2, MAX_AUTO_WORKERS), (5.0, MAX_AUTO_WORKERS)]
)
def test_auto_workers_cover_the_latency_and_stay_one_nearby(latency: float, workers: int) -> None:
    pacer = Pacer(1)
    for _ in range(5):
        pacer._answered(latency, False, API)
    assert pacer.suggested_workers() == workers


def test_a_request_failing_once_the_budget_is_spent_is_budget_spent_not_the_targets_failure() -> None:
    """A request in flight is cut at the budget (its deadline is the time left): its timeout is no answer
    of the target's to judge."""
    pacer = Pacer(1, stop_at=time.monotonic() + 0.2)

    def cut() -> Answer:
        time.sleep(0.3)
        raise TimeoutError("the request's deadline passed")

    with pytest.raises(BudgetSpent):
        pacer.send(cut, lambda answer: answer.status, lambda answer: answer.wait, API)
    left = Pacer(1, stop_at=time.monotonic() + 5).left()
    assert left is not None and 4 < left <= 5 and Pacer(1).left() is None


def test_a_batch_sent_at_once_passes_the_limit_but_not_the_budget() -> None:
    pacer = Pacer(1)
    target = Target([Answer(429, "1")], seconds=0.1)
    threads = [threading.Thread(target=pacer.at_once, args=(target.send,)) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert target.most == 4 and pacer.waits == 0  # no limit, and a 429 is not waited out
    pacer.stop("interrupted")
    with pytest.raises(BudgetSpent, match="interrupted"):
        pacer.at_once(target.send)
    assert target.sent == 4
