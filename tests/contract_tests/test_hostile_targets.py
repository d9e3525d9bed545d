"""The suite against hostile servers: every run ends within its deadlines, in a verdict or exit 2 with one
line, never a traceback; its reports are written and well-formed; nothing the target sends acts on the
terminal; no secret the suite sent is shown; and its memory stays bounded.

Bound stated: a run's peak RSS stays under MEMORY_BOUND_MIB (a plain run takes about 100 MiB; the
size limit keeps a response at 10 MiB and a socket read at 16 KiB, so a 1 GiB gzip bomb or a 500 MiB
body adds little).
"""

from __future__ import annotations

import asyncio
import json
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from contract_tests import cli
from contract_tests.client.keyring import REFUSALS_IN_A_ROW
from contract_tests.judge.domain import race_references, races
from contract_tests.outcome.findings import RULE_EXCERPT
from contract_tests.spec import Spec
from mock_server.app import create_app
from mock_server.settings import Settings
from tests.support import hostile
from tests.support.faults import Fault, edit_json
from tests.support.live import running
from tests.support.suite import TOKEN_PATH, Outcome, credentials, shop_contract, token_expiring_at
from tests.support.variants import set_status

API = "/shop/api/v1"
ITEM = f"{API}/products/[^/]+/?"
WRITES = "POST|PUT|PATCH"
LINES = f"{API}/productlines/.*"
DEADLINE = 1.0
MEMORY_BOUND_MIB = 300
RACES = [*races.CHECKS, *race_references.CHECKS]
"""Left out of these runs: a race's burst of up to 24 requests at once timed out on a hostile server that
answers one connection at a time (a run error, exit 2), whatever the answers under test."""
SHORT = ["--seed", "5", "--profile", "fast", "--max-examples", "1", "--quiet", "--exclude-checks", *RACES]
"""A short run, its answers judged by the default `--request-timeout`: for a clean verdict on the correct mock,
whose answers a loaded machine may hold past `DEADLINE` (once in CI: a `response_time` violation)."""
QUICK = [*SHORT, "--request-timeout", str(DEADLINE)]
"""A short run whose answers must come within `DEADLINE`, so that a hostile target's trickle or stall ends it soon."""
ON_ITEMS = ["--include", "get_product"]
DOMAIN, SCHEMATHESIS = ["--no-conformance"], ["--no-domain"]  # each HTTP client on its own: runs stay short
ON_WRITES = ["--include", "create_product_line", "--include", "update_product_line", "--include", "get_product_line"]
ON_LISTS = ["--include", "list_products", "--include", "create_product"]
DEEP_JSON = b"[" * 100_000 + b"]" * 100_000
"""Nested past Python's recursion limit: json.loads raises RecursionError, which is no ValueError."""


def assert_well_behaved(outcome: Outcome, report_dir: Path, codes: tuple[int, ...]) -> None:
    """A verdict or exit 2 in one line; no traceback; all three reports, the JUnit file parsable;
    no control character from the target on the terminal or in the reports; memory bounded."""
    assert outcome.code in codes, outcome.stdout[-3000:] + outcome.stderr[-2000:]
    assert "Traceback" not in outcome.stderr and "Traceback" not in outcome.stdout, outcome.stderr[-3000:]
    if outcome.code == 2:
        assert len(outcome.stderr.strip().splitlines()) == 1, outcome.stderr
    written = [report_dir / name for name in ("summary.txt", "findings.json", "junit.xml", "report.html")]
    if outcome.findings:
        assert all(path.exists() for path in written)
        ET.parse(report_dir / "junit.xml")
    texts = [outcome.stdout, outcome.stderr, *(p.read_text(encoding="utf-8") for p in written if p.exists())]
    for text in texts:
        assert not any(ord(c) < 32 and c not in "\n\t" for c in text), repr(text[:500])
    assert outcome.peak_rss_mib < MEMORY_BOUND_MIB, f"a run of the suite peaked at {outcome.peak_rss_mib:.0f} MiB"


def verdicts(outcome: Outcome) -> set[str]:
    return {violation["check"] for violation in outcome.findings.get("violations", [])}


@dataclass(frozen=True)
class Case:
    name: str
    app: Callable[[], Any]
    args: list[str]
    check: str | None  # the verdict it must produce

    def __str__(self) -> str:
        return self.name


def on(method: str, path: str, answer: hostile.Answer, **kwargs: Any) -> Callable[[], Any]:
    return lambda: hostile.Hostile(method, path, answer, **kwargs)


LIST_SHAPES = {
    "list_as_array": b"[]",
    "results_not_objects": b'{"count": 2, "next": null, "previous": null, "results": [1, "x"]}',
    "invalid_json": b'{"count": ',
    "empty_body": b"",
}
CASES = [
    *(
        Case(f"{name}_{client}", on("GET", ITEM, answer), [*ON_ITEMS, *phase], check)
        for name, answer, check in [
            ("trickled_body", hostile.trickle_body, "response_time"),
            ("endless_body", hostile.endless_body, "response_size"),
            ("huge_body", hostile.huge_body, "response_size"),
            ("gzip_bomb", hostile.gzip_bomb, "response_size"),
        ]
        for client, phase in (("domain", DOMAIN), ("schemathesis", SCHEMATHESIS))
    ),
    Case(
        "json_100000_deep_schemathesis",
        on("GET", ITEM, hostile.json_answer(DEEP_JSON)),
        [*ON_ITEMS, *SCHEMATHESIS],
        "response_schema_conformance",
    ),
    Case("html_answers_to_writes", on(WRITES, LINES, hostile.html_page), ON_WRITES, "status_code_conformance"),
    Case(
        "refused_multipart",
        on(WRITES, LINES, hostile.refuse_multipart, when=hostile.multipart),
        ON_WRITES,
        "positive_data_acceptance",
    ),
    Case("terminal_escapes", on(WRITES, LINES, hostile.screen_attack), ON_WRITES, None),
    *(
        Case(name, on("GET", f"{API}/products/?", hostile.json_answer(body)), ON_LISTS, None)
        for name, body in LIST_SHAPES.items()
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_hostile_target_gets_a_verdict(case: Case, tmp_path: Path) -> None:
    hostile.gzip_bomb_body()  # made before serving: not in the server's event loop
    with running(case.app()) as origin:
        started = time.monotonic()
        outcome = shop_contract(["--base-url", origin + API, *credentials(origin), *QUICK, *case.args], tmp_path)
        took = time.monotonic() - started
    assert_well_behaved(outcome, tmp_path, (1,))
    assert case.check is None or case.check in verdicts(outcome), outcome.stdout[-3000:]
    assert took < 120


def test_terminal_escapes_are_shown_escaped(tmp_path: Path) -> None:
    with running(hostile.Hostile(WRITES, LINES, hostile.screen_attack)) as origin:
        args = ["--base-url", origin + API, *credentials(origin), *QUICK, *ON_WRITES, "--verbose"]
        outcome = shop_contract(args, tmp_path)
    assert_well_behaved(outcome, tmp_path, (1,))
    assert "\\x1b[2J" in outcome.stdout and "\\x1b[2J" in (tmp_path / "summary.txt").read_text(encoding="utf-8")
    verdicts_shown = [line for line in outcome.stdout.splitlines() if line.startswith("Result:")]
    assert len(verdicts_shown) == 1 and "violation(s) of" in verdicts_shown[0]


def _probe_path() -> str:
    return next(op.path for op in Spec.load().lists if not op.path_parameters)


def test_trickled_headers_end_within_the_deadline(tmp_path: Path) -> None:
    empty_list = b'{"count": 0, "next": null, "previous": null, "results": []}'
    with hostile.trickling_headers(API + _probe_path(), empty_list) as origin:
        args = ["--base-url", origin + API, "--api-key", "dev-api-key", *QUICK, "--include", "get_product_line"]
        started = time.monotonic()
        outcome = shop_contract([*args, "--no-conformance"], tmp_path)
        took = time.monotonic() - started
    assert_well_behaved(outcome, tmp_path, (1,))
    assert "response_time" in verdicts(outcome)
    requests = (
        (tmp_path / "summary.txt").read_text(encoding="utf-8").count("curl ")
        + len(outcome.findings["not_exercised"])
        + 1
    )
    assert took < 15 + requests * DEADLINE * 2, f"{took:.0f} s"


@pytest.mark.parametrize(
    ("answer", "kind"),
    [
        (hostile.html_page, "text/html"),
        (hostile.json_answer(b'{"hello": "world"}'), "application/json"),
        (hostile.json_answer(b"[]"), "application/json"),
        (hostile.json_answer(DEEP_JSON), "application/json"),
    ],
    ids=["html", "other_json", "json_array", "json_100000_deep"],
)
def test_a_base_url_that_is_not_this_api_exits_2(answer: hostile.Answer, kind: str, tmp_path: Path) -> None:
    with running(hostile.Hostile("GET", ".*", answer)) as origin:
        outcome = shop_contract(["--base-url", origin + API, "--api-key", "dev-api-key", *QUICK], tmp_path)
    assert_well_behaved(outcome, tmp_path, (2,))
    assert "does not serve this API" in outcome.stderr and kind in outcome.stderr


def test_a_body_nested_100000_deep_gets_a_verdict_from_the_domain_checks(tmp_path: Path) -> None:
    with running(hostile.Hostile("GET", ITEM, hostile.json_answer(DEEP_JSON))) as origin:
        args = ["--base-url", origin + API, *credentials(origin), *QUICK, *ON_ITEMS, *DOMAIN]
        outcome = shop_contract(args, tmp_path)
    assert_well_behaved(outcome, tmp_path, (1,))
    assert outcome.findings["errors"] == [] and "round_trip" in verdicts(outcome), outcome.findings["errors"]


def test_a_token_endpoint_answering_100000_deep_exits_2_saying_so(tmp_path: Path) -> None:
    with running(hostile.Hostile("POST", TOKEN_PATH, hostile.json_answer(DEEP_JSON))) as origin:
        outcome = shop_contract(["--base-url", origin + API, *credentials(origin), *QUICK, *ON_ITEMS], tmp_path)
    assert_well_behaved(outcome, tmp_path, (2,))
    assert "answered no access_token" in outcome.stderr


@pytest.mark.parametrize(
    "access_token",
    ["", " padded ", "token\r\nX-Injected: 1", "tökén", 12345, None, {"jwt": "a.b.c"}, ["a.b.c"]],
    ids=["empty", "padded", "line-break", "non-ascii", "number", "null", "object", "list"],
)
def test_a_token_endpoint_answering_a_token_no_header_can_carry_exits_2_saying_so(
    tmp_path: Path, access_token: object
) -> None:
    """An access_token that is no string, or one a header cannot carry as it is: sent as it came, it was an
    empty Bearer, `None`, a header the HTTP client refused (naming the backend unreachable) or an injected
    header."""
    answer = json.dumps({"access_token": access_token, "token_type": "Bearer", "expires_in": 300}).encode()
    with running(hostile.Hostile("POST", TOKEN_PATH, hostile.json_answer(answer))) as origin:
        outcome = shop_contract(["--base-url", origin + API, *credentials(origin), *QUICK, *ON_ITEMS], tmp_path)
    assert_well_behaved(outcome, tmp_path, (2,))
    assert "answered no access_token a header can carry" in outcome.stderr, outcome.stderr


@dataclass
class SlowTokens:
    """The mock, its token endpoint answering after `delay` seconds."""

    app: Any
    delay: float

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"] == TOKEN_PATH:
            await asyncio.sleep(self.delay)
        await self.app(scope, receive, send)


def test_a_realm_slower_than_the_request_timeout_still_gives_the_run_its_token(tmp_path: Path) -> None:
    """`--request-timeout` judges the target's answers; the realm has at least the default. With the run's
    deadline, a token a strict deadline missed stopped the run before it began (exit 2, "timed out")."""
    with running(SlowTokens(create_app(Settings()), delay=3 * DEADLINE)) as origin:
        outcome = shop_contract(["--base-url", origin + API, *credentials(origin), *QUICK, *ON_ITEMS], tmp_path)
    assert_well_behaved(outcome, tmp_path, (0,))


def test_a_realm_whose_tokens_expired_before_they_were_issued_exits_2_naming_the_clocks(tmp_path: Path) -> None:
    """A realm an hour behind this machine, giving no `expires_in`: every token was due at once, and each
    request fetched a new one."""
    token = token_expiring_at(int(time.time()) - 3600)
    answer = json.dumps({"access_token": token, "token_type": "Bearer"}).encode()
    with running(hostile.Hostile("POST", TOKEN_PATH, hostile.json_answer(answer))) as origin:
        outcome = shop_contract(["--base-url", origin + API, *credentials(origin), *QUICK, *ON_ITEMS], tmp_path)
    assert_well_behaved(outcome, tmp_path, (2,))
    assert "its clock or this machine's is off" in outcome.stderr and token not in outcome.stderr


def test_a_value_the_target_sends_is_cut_where_a_rule_quotes_it(tmp_path: Path) -> None:
    """`previous` of 5 MB on page 1: pagination_walk quotes it in its rule, the reports keep 2,000 characters."""
    app = Fault(create_app(Settings()), "GET", f"{API}/productlines/", response=edit_json(previous_of_5_mb))
    with running(app) as origin:
        args = ["--base-url", origin + API, *credentials(origin), *QUICK, "--include", "list_product_lines"]
        outcome = shop_contract([*args, *DOMAIN], tmp_path)
    assert_well_behaved(outcome, tmp_path, (1,))
    rules = [violation["rule"] for violation in outcome.findings["violations"]]
    assert "pagination_walk" in verdicts(outcome) and max(map(len, rules)) <= RULE_EXCERPT + 2
    assert len(outcome.stdout) < 100_000 and (tmp_path / "summary.txt").stat().st_size < 100_000


def previous_of_5_mb(body: Any) -> Any:
    body["previous"] = "x" * 5_000_000
    return body


def test_secrets_echoed_by_the_target_are_masked(tmp_path: Path) -> None:
    with running(hostile.Hostile(WRITES, LINES, hostile.echo_headers)) as origin:
        token = httpx.post(
            origin + TOKEN_PATH,
            data={"grant_type": "client_credentials", "client_id": "shop-dev", "client_secret": "shop-dev-secret"},
        ).json()["access_token"]
        args = [
            "--base-url",
            origin + API,
            "--api-key",
            "dev-api-key",
            "--token",
            token,
            *QUICK,
            *ON_WRITES,
            "--verbose",
        ]
        outcome = shop_contract(args, tmp_path)
    assert_well_behaved(outcome, tmp_path, (1,))
    shown = [outcome.stdout, outcome.stderr, *(p.read_text(encoding="utf-8") for p in tmp_path.iterdir())]
    assert "[masked]" in outcome.stdout
    for text in shown:
        assert "dev-api-key" not in text and token not in text


def test_the_domain_checks_leave_an_empty_correct_backend_empty(tmp_path: Path) -> None:
    """What the run makes to have something to reference (a product line), and what each check makes,
    is removed again: no violation, and nothing stays. (The full run on an empty target is in
    test_domain_checks.py.)"""
    app = create_app(Settings(fixtures=None))
    with running(app) as origin:
        outcome = shop_contract(["--base-url", origin + API, *credentials(origin), *SHORT, *DOMAIN], tmp_path)
    assert_well_behaved(outcome, tmp_path, (0,))
    assert outcome.findings["run"]["targets"] == {"backend": origin + API}
    assert app.store.export() == {name: [] for name in app.store.export()}


def test_a_violation_on_an_empty_target_carries_the_creation_of_what_it_references(tmp_path: Path) -> None:
    """On an empty target every product names the product line the suite made: a Schemathesis-phase
    violation's reproduction starts by creating that line, so that it runs on an empty target too."""
    app = Fault(create_app(Settings(fixtures=None)), "POST", f"{API}/products/", response=set_status(200))
    with running(app) as origin:
        args = ["--base-url", origin + API, *credentials(origin), *QUICK, "--no-domain", "--include", "create_product"]
        outcome = shop_contract(args, tmp_path)
    assert_well_behaved(outcome, tmp_path, (1,))
    found = [v for v in outcome.findings["violations"] if v["operation"] == "create_product"]
    assert found, outcome.stdout[-3000:]
    for violation in found:
        create_line = violation["setup"][0]
        assert create_line.startswith("curl -X POST") and f"{API}/productlines/" in create_line, violation
        line = json.loads(create_line.split(" -d '", 1)[1].rsplit("'", 1)[0])["productline"]
        assert line in violation["curl"], violation  # JSON, form or multipart: the value itself is sent


# Credentials for the whole run ---------------------------------------------------------------------------


TTL = 2


HELD_REQUEST = 5


@dataclass
class CountingTokens:
    """The mock, counting the tokens its realm issues.

    It holds the run's fifth API request until the first token is a second past its expiry, so the
    run outlives that token however fast the machine runs the rest.
    """

    app: Any
    ttl: float = TTL
    issued: int = 0
    first_issued: float | None = None
    requests: int = 0

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["method"] == "POST" and scope["path"] == TOKEN_PATH:
            self.issued += 1
            self.first_issued = self.first_issued or time.monotonic()
        elif scope["type"] == "http" and self.first_issued is not None:
            self.requests += 1
            if self.requests == HELD_REQUEST:
                await asyncio.sleep(max(0.0, self.first_issued + self.ttl + 1 - time.monotonic()))
        await self.app(scope, receive, send)


@pytest.fixture
def realm() -> CountingTokens:
    return CountingTokens(create_app(Settings(token_ttl=TTL)))


@pytest.fixture
def short_lived_tokens(realm: CountingTokens) -> Iterator[str]:
    """The mock with a 2-second token lifetime."""
    with running(realm) as origin:
        yield origin


LONG_RUN = ["--seed", "2", "--quiet", "--include", "list_customers", "--include", "get_customer"]
LONG_RUN += ["--max-examples", "20"]


def test_a_realm_token_is_renewed_for_the_whole_run(
    short_lived_tokens: str, realm: CountingTokens, tmp_path: Path
) -> None:
    origin = short_lived_tokens
    args = ["--gateway-url", origin + "/customers/v1", *credentials(origin), "--profile", "fast", "--seed", "2"]
    outcome = shop_contract([*args, "--quiet"], tmp_path)
    assert_well_behaved(outcome, tmp_path, (0,))
    assert outcome.findings["run"]["duration"] > TTL + 0.5, "the run must outlive its first token"
    # Renewed before expiry; a 401 on a loaded machine is renewed after, and the run still passes.
    assert realm.issued >= 2 and outcome.findings["run"]["refused_credentials"] < REFUSALS_IN_A_ROW


STATIC_TTL = 8
"""Seconds a static token lives: past the time a run takes to start on a loaded machine (with 2 s it was
refused from the run's first request now and then, before any report), the held request ends it."""


def test_a_static_token_that_expires_during_the_run_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """In-process: a subprocess can take longer to start than the token lives on a loaded machine."""
    with running(CountingTokens(create_app(Settings(token_ttl=STATIC_TTL)), ttl=STATIC_TTL)) as origin:
        form = {"grant_type": "client_credentials", "client_id": "shop-dev", "client_secret": "shop-dev-secret"}
        token = httpx.post(origin + TOKEN_PATH, data=form).json()["access_token"]
        args = ["--gateway-url", origin + "/customers/v1", "--token", token, *LONG_RUN, "--report-dir", str(tmp_path)]
        code = cli.main(args)
    out, err = capsys.readouterr()
    assert code == 2 and len(err.strip().splitlines()) == 1 and "expired" in err and "during the run" in err, err
    assert token not in out + err
    findings = json.loads((tmp_path / "findings.json").read_text())
    assert "expired" in findings["aborted"] and findings["run"]["duration"] > 0


@pytest.mark.parametrize(
    ("exp", "said"),
    [(1000, "expired at 1970-01-01 00:16:40 UTC, before the run"), (-1e12, "at the Unix time -1000000000000")],
)
def test_a_static_token_that_expired_before_the_run_exits_2_saying_when(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], exp: float, said: str
) -> None:
    """An `exp` before the run, also one before the first year a date can show: it was an internal error."""
    token = token_expiring_at(exp)
    with running(create_app(Settings())) as origin:
        code = cli.main(["--gateway-url", origin + "/customers/v1", "--token", token, *QUICK])
    out, err = capsys.readouterr()
    assert code == 2 and len(err.strip().splitlines()) == 1 and said in err, err
    assert "internal error" not in err and token not in out + err


def test_credentials_lost_while_learning_the_target_end_the_run_with_its_reports(tmp_path: Path) -> None:
    """Refused from the first request after the reachability probe, so from the discovery's: the run ends
    there, exit 2 in one line, and its reports say why (a static token that expires early, on a loaded
    machine, meets the same)."""
    app = hostile.Hostile(".*", f"{API}/.*", hostile.unauthorized, when=hostile.refusing_after(1))
    with running(app) as origin:
        outcome = shop_contract(["--base-url", origin + API, *credentials(origin), *QUICK, *ON_ITEMS], tmp_path)
    assert_well_behaved(outcome, tmp_path, (2,))
    assert "refused the suite's credentials" in outcome.stderr
    assert "refused the suite's credentials" in outcome.findings["aborted"]
    assert outcome.findings["violations"] == []


def test_credentials_refused_in_the_middle_of_the_run_exit_2(tmp_path: Path) -> None:
    app = hostile.Hostile(".*", f"{API}/.*", hostile.unauthorized, when=hostile.refusing_after(30))
    with running(app) as origin:
        outcome = shop_contract(["--base-url", origin + API, *credentials(origin), *QUICK, *ON_ITEMS], tmp_path)
    assert_well_behaved(outcome, tmp_path, (2,))
    assert "refused the suite's credentials" in outcome.stderr
    assert outcome.findings["run"]["refused_credentials"] >= 3
