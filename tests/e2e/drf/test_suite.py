"""The suite against a real Django REST Framework backend (tests/support/drf, test support).

The correct backend gives no violation, also ignoring letter case as on MySQL (`case_insensitive`); each
variant with one defect DRF services commonly ship is reported by its named check; the `realistic` variant
(the real service of issue 17, three defects at once) shows its three defects and nothing else. The
three-seed runs carry the `drf` marker and run in `tox -e drf`, on Django as it is deployed: gunicorn's
sync workers. `tox -e e2e` has the correct backend and one variant under gunicorn (tests/e2e/test_zoo.py).
The tokens come from a running mock's realm, which the backend verifies against.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import httpx
import pytest

pytest.importorskip("django")
pytest.importorskip("rest_framework")
drf = pytest.importorskip("tests.support.drf.server", reason="the DRF test backend is not on this branch")

from contract_tests.client.arrival import BUFFERED, ONE_AT_A_TIME  # noqa: E402
from contract_tests.judge.domain import race_references, races  # noqa: E402
from mock_server.app import create_app  # noqa: E402
from mock_server.settings import Settings  # noqa: E402
from tests.e2e.drf.test_backend import PROBES  # noqa: E402
from tests.support.drf import ADMITTED, API_KEY, COMBINED, RACES  # noqa: E402
from tests.support.live import running  # noqa: E402
from tests.support.ports import free_port  # noqa: E402
from tests.support.suite import TOKEN_PATH, Outcome, passed, shop_contract  # noqa: E402
from tests.support.zoo.nginx import nginx_in_front_of  # noqa: E402
from tests.support.zoo.tls import make_certificates  # noqa: E402

pytestmark = pytest.mark.timeout(1800)  # three runs of a real Django in one test: past the default 600 s on a busy CI
SEEDS = (101, 202, 303)
RUN_TIMEOUT = 900  # seconds for one run of a real Django on a loaded machine
EXCLUDED = ["--exclude-checks", "read_back_identical", "deleted_everywhere", "list_order", "identifier_variants"]
"""Issue 28's read-back checks: the three-seed runs (with Schemathesis' phases) leave them out to fit CI;
they run alone against Django under gunicorn, the correct backend and the realistic one, in
test_the_read_back_checks_add_nothing_false_on_django_under_gunicorn."""
OVER_THREE_PAGES = 350  # more than 3 x the clamped page size (100) in one list
CAUGHT_BY = {
    "unprotected_fk": "referential_rules",
    "default_lookup": "identifier_addressable",
    "writable_pk": "identifier_immutable",
    "patch_resets": "patch_locality",
    "wrong_previous": "pagination_walk",
}
ALSO_BREAKS = {
    "patch_resets": {"round_trip", "concurrent_lost_update", "concurrent_same_field"},
    "unprotected_fk": {"concurrent_reference_delete"},
}
"""What else a variant's one defect may break in a run of every domain check, true findings of the same
defect: a PATCH that resets the fields it was not sent also fails their read-back, and the updates racing
on one product; a product created as its line is deleted makes that DELETE answer 500 (found 3 of 15
tries under gunicorn's sync workers). The other variants' whole runs catch their check alone."""
REALISTIC = "realistic"
SYNC = "gunicorn-sync"  # as Django is deployed
DEFECTS = tuple(d for d in COMBINED[REALISTIC] if d not in (*ADMITTED, *RACES))  # fk, lookup, writable_pk
"""The realistic variant's defects one request shows; it also keeps "" for an empty form value (blank_kept), which
the spec admits, and writes outside a transaction (unlocked_writes), which concurrent requests show."""
RACE_CHECKS = [*races.CHECKS, *race_references.CHECKS]
CAUGHT_RACING = {"concurrent_lost_update", "concurrent_duplicate_create"}
"""What the realistic backend's `unlocked_writes` must be caught by in every run (issue 36)."""
ALSO_UNDER_UVICORN = "default_lookup"
"""The variant whose whole domain verdict is also compared under uvicorn: its identifiers with "." and "/"
reach Django through each server's own decoding of the path, the one part of a request the server shapes.
The other variants' whole runs under uvicorn cost CI about 100 s of CPU and held nothing more (issue 37):
the zoo runs the correct backend under gunicorn's gthread workers and the mock under four servers."""


@pytest.fixture(scope="module")
def realm() -> Iterator[str]:
    """A mock whose realm issues the tokens (`/realms/shop`)."""
    port = free_port()  # the realm's issuer names its own port
    with running(create_app(Settings(port=port)), port=port) as origin:
        yield origin


def contract(origin: str, realm: str, tmp_path: Path, *args: str, excluded: list[str] = EXCLUDED) -> Outcome:
    surfaces = ["--base-url", f"{origin}/shop/api/v1", "--gateway-url", f"{origin}/customers/v1"]
    realm_args = ["--token-url", realm + TOKEN_PATH, "--client-id", "shop-dev", "--client-secret", "shop-dev-secret"]
    args_all = [*surfaces, "--api-key", "dev-api-key", *realm_args, "--quiet", *excluded, *args]
    return shop_contract(args_all, tmp_path, timeout=RUN_TIMEOUT)


def passes_every_seed(origin: str, realm: str, tmp_path: Path, excluded: list[str] = EXCLUDED) -> list[Outcome]:
    """The default profile at each of SEEDS on one database: no error, no violation, every check of
    concurrent writes exercised (two sync workers serve side by side), and no more requests in flight
    than they serve."""
    outcomes = []
    for seed in SEEDS:
        args = ("--profile", "default", "--seed", str(seed))
        outcome = contract(origin, realm, tmp_path / str(seed), *args, excluded=excluded)
        assert outcome.findings.get("errors") == [], f"seed {seed}: {outcome.findings.get('errors')}"
        assert outcome.code == 0, f"seed {seed}: " + outcome.stdout[-6000:] + outcome.stderr
        assert outcome.findings["run"]["workers"] <= 2, f"seed {seed}: more requests in flight than two workers"
        assert set(RACE_CHECKS) <= set(outcome.findings["exercised"]), f"seed {seed}: a race not exercised"
        outcomes.append(outcome)
    return outcomes


CASE_CHECKS = {
    "identifier_variants": {"create_product_line", "create_product", "get_customer"},
    "list_order": {"list_product_lines", "list_products", "get_product_line_products"},
}
"""The checks that see letter case (the decisions `identifiers-exact` and `list-order`), and the
operations each must judge: the string-keyed collections', and the customer read by the other spellings
of its number (`integer-identifiers`, which Django REST Framework reads as Python's int() does)."""


@pytest.mark.drf
def test_the_correct_backend_ignoring_letter_case_passes_with_three_seeds(realm: str, tmp_path: Path) -> None:
    """The correct backend whose identifiers ignore letter case for all of Unicode in lookups, uniqueness
    and order (`case_insensitive`: MySQL's default collation, here one registered on SQLite) gets no
    report, as the decisions admit. Django as it is deployed (gunicorn, two sync workers, one request at
    a time each), the default profile, three runs on one database whose product list is over three
    clamped pages long (the seed data plus OVER_THREE_PAGES products): reruns must not collide with what
    earlier runs created, and `--workers auto` (the default) overlaps no more requests than the server
    serves at once (client/capacity.py), so the suite reports no slowness or refusal it caused itself
    (issue 27). The two checks that see letter case stay in, each judging its collections in every run
    (never a silent pass).

    One backend holds both, where the correct one (letter case kept) and this one ran three seeds each
    (issue 37: 200 s of CPU). The correct code with letter case kept is run whole three times as the
    realistic backend (its defects aside), its read-back and case checks alone twice below, and the fast
    profile once in the zoo (tests/e2e/test_zoo.py)."""
    excluded = [name for name in EXCLUDED if name not in CASE_CHECKS]
    realm_url = f"{realm}/realms/shop"
    with drf.serve("case_insensitive", realm_url=realm_url, extra_products=OVER_THREE_PAGES, server=SYNC) as origin:
        outcomes = passes_every_seed(origin, realm, tmp_path, excluded)
    for seed, outcome in zip(SEEDS, outcomes, strict=True):
        judged = passed(outcome)
        for check, operations in CASE_CHECKS.items():
            assert {(check, operation) for operation in operations} <= judged, f"seed {seed}: {check} judged too few"


def defect_explaining(violation: dict[str, Any]) -> str | None:
    """Which defect of the `realistic` variant explains a reported violation; None: no real defect does.

    Beside the domain check that judges each defect, Schemathesis' checks see two of them: the DELETE
    of a referenced item answers Django's HTML 500 page (unprotected_fk), and a path whose identifier
    has a "." matches no route, so Django's HTML 404 page answers it, not the view (default_lookup);
    a PUT or PATCH that renames answers the new item (writable_pk, seen by item_identity).
    """
    check, operation, response = violation["check"], violation["operation"], violation["response"]
    status, _, rest = response.partition("\n")
    html = "content-type: text/html" in rest.partition("\n\n")[0].lower()
    judged_by = {CAUGHT_BY[defect]: defect for defect in DEFECTS}
    if check in judged_by:
        return judged_by[check]
    if check in RACE_CHECKS:
        return "unlocked_writes"
    if check == "item_identity" and operation.startswith(("update_", "patch_")):
        return "writable_pk"
    if status == "HTTP 500" and operation.startswith("delete_"):
        return "unprotected_fk"
    url = next((word.strip("'") for word in violation["curl"].split() if "://" in word), "")
    if status == "HTTP 404" and html and "." in unquote(urlsplit(url).path):
        return "default_lookup"
    return None


def test_the_realistic_backend_has_its_three_defects_and_no_other(realm: str) -> None:
    with (
        drf.serve(REALISTIC, realm_url=f"{realm}/realms/shop") as origin,
        httpx.Client(base_url=f"{origin}/shop/api/v1", headers={"X-API-Key": API_KEY}, timeout=10) as client,
    ):
        assert {name for name, probe in PROBES.items() if probe(client)} == set(DEFECTS)


@pytest.mark.drf
def test_the_realistic_backend_under_gunicorn_sync_shows_its_three_defects_and_nothing_else(
    realm: str, tmp_path: Path
) -> None:
    """Issue 17's service, served as deployed (gunicorn, 2 sync workers: `Connection: close` after every
    response), default profile, three seeds: every run completes, finds the three defects, and reports
    nothing that none of them explains. Issue 36: its writes outside a transaction (`unlocked_writes`: a
    PATCH's whole-row save, a SELECT before the INSERT) lose an update and answer a duplicate create with a
    500 in every run, every check of concurrent writes exercised. The correct backend's three seeds (each
    write one `BEGIN IMMEDIATE` transaction, an IntegrityError the documented 409) pass them all."""
    with drf.serve(REALISTIC, realm_url=f"{realm}/realms/shop", server=SYNC) as origin:
        for seed in SEEDS:
            outcome = contract(origin, realm, tmp_path / str(seed), "--profile", "default", "--seed", str(seed))
            found = outcome.findings.get("violations", [])
            assert outcome.findings.get("errors") == [], f"seed {seed}: {outcome.findings.get('errors')}"
            assert {violation["check"] for violation in found} >= {CAUGHT_BY[defect] for defect in DEFECTS}
            assert [violation for violation in found if defect_explaining(violation) is None] == [], f"seed {seed}"
            assert {violation["check"] for violation in found} >= CAUGHT_RACING, f"seed {seed}: a race not caught"
            assert set(RACE_CHECKS) <= set(outcome.findings["exercised"]), f"seed {seed}: a race not exercised"
            assert outcome.code == 1, f"seed {seed}: " + outcome.stderr


@pytest.mark.drf
def test_one_sync_worker_lets_no_race_be_exercised_and_none_pass(realm: str, tmp_path: Path) -> None:
    """The realistic backend (its writes race where two workers serve) under one sync worker: it takes
    requests one at a time, so no write can race another. Every check of concurrent writes is listed as
    not exercised, "no overlap observed", never passed, and nothing is reported (client/arrival.py):
    served directly, and behind nginx passing bodies on as they come (the held create tells it). Behind
    nginx reading whole requests first, as it does by default, the server cannot be seen: the tries run,
    a check finding nothing says so, and what one finds is a real defect (a product created, then its line
    deleted one after the other, answers 500: `unprotected_fk`)."""
    certificates = make_certificates(tmp_path)
    races_only = ["--checks", *RACE_CHECKS, "--no-conformance", "--ca-bundle", str(certificates.ca)]
    with drf.serve(REALISTIC, realm_url=f"{realm}/realms/shop", server="gunicorn-sync-one") as origin:
        outcomes = {"direct": contract(origin, realm, tmp_path / "direct", *races_only, excluded=[])}
        for name, buffering in (("nginx", True), ("nginx passing bodies on", False)):
            prefix = tmp_path / name.replace(" ", "-")
            prefix.mkdir()
            with nginx_in_front_of(origin, certificates, prefix, request_buffering=buffering) as proxied:
                outcomes[name] = contract(proxied, realm, prefix / "report", *races_only, excluded=[])
    for name, outcome in outcomes.items():
        assert outcome.findings.get("errors") == [], f"{name}: {outcome.findings.get('errors')}"
        found = outcome.findings.get("violations", [])
        assert [violation for violation in found if defect_explaining(violation) is None] == [], name
        unjudged = set(RACE_CHECKS) - {violation["check"] for violation in found}
        reasons = {skip["check"]: skip["reason"] for skip in outcome.findings["not_exercised"]}
        expected = f"no overlap observed: {BUFFERED}" if name == "nginx" else ONE_AT_A_TIME
        assert all(expected in reasons.get(check, "") for check in unjudged), (name, reasons)
        assert not unjudged & set(outcome.findings["exercised"]), name  # none passed
    assert (outcomes["direct"].code, outcomes["nginx passing bodies on"].code) == (0, 0)


def domain_verdict(origin: str, realm: str, report: Path, seed: int, *checks: str) -> tuple[int, set[str], list[str]]:
    """Exit code, violated checks and errors of the domain checks alone (`--no-conformance`), fast profile,
    all of them or `checks`."""
    chosen = ["--checks", *checks] if checks else []
    args = ("--profile", "fast", "--no-conformance", "--seed", str(seed), *chosen)
    outcome = contract(origin, realm, report, *args, excluded=[] if checks else EXCLUDED)
    caught = {violation["check"] for violation in outcome.findings.get("violations", [])}
    return outcome.code, caught, outcome.findings.get("errors", [])


@pytest.mark.drf
@pytest.mark.parametrize("variant", sorted(CAUGHT_BY))
def test_each_drf_variant_is_caught_by_its_check_with_three_seeds(realm: str, tmp_path: Path, variant: str) -> None:
    """Each defect is a domain check's to find, so `--no-conformance`: caught without Schemathesis' help
    (a DELETE answering 500 included), in three runs on one database under gunicorn's sync workers
    (`Connection: close` after every response). The first seed runs every domain check, and on a fresh
    database under uvicorn gives the very same verdict for ALSO_UNDER_UVICORN. The other two run the
    variant's check alone: the whole runs' other checks only cost CI time there (issue 37). The whole run
    catches nothing its defect does not break (ALSO_BREAKS): no false finding beside the true one."""
    check = CAUGHT_BY[variant]
    with drf.serve(variant, realm_url=f"{realm}/realms/shop", server=SYNC) as origin:
        closed = httpx.get(f"{origin}/shop/api/v1/products/", headers={"X-API-Key": API_KEY}).headers.get("connection")
        whole = domain_verdict(origin, realm, tmp_path / str(SEEDS[0]), SEEDS[0])
        alone = [domain_verdict(origin, realm, tmp_path / str(seed), seed, check) for seed in SEEDS[1:]]
    assert closed == "close", "gunicorn's sync workers close the connection after every response"
    for seed, (code, caught, errors) in zip(SEEDS, [whole, *alone], strict=True):
        assert (code, errors) == (1, []) and check in caught, f"seed {seed}: {code}, {caught}, {errors}"
    assert whole[1] - {check} <= ALSO_BREAKS.get(variant, set()), f"beside {check}: {whole[1] - {check}}"
    if variant == ALSO_UNDER_UVICORN:
        with drf.serve(variant, realm_url=f"{realm}/realms/shop", server="uvicorn") as origin:
            assert domain_verdict(origin, realm, tmp_path / "uvicorn", SEEDS[0]) == whole


@pytest.mark.drf
@pytest.mark.parametrize("variant", ["correct", REALISTIC])
def test_the_read_back_checks_add_nothing_false_on_django_under_gunicorn(
    realm: str, tmp_path: Path, variant: str
) -> None:
    """Issue 28's checks alone (the three-seed runs leave them out for time), on Django deployed as it is
    (gunicorn, sync workers): on the correct backend every write reads back identical in each media
    type, from the item and its lists, deletes are gone everywhere, lists keep their order, and the
    identifier variants are handled as the decisions table says; on the realistic one, nothing that
    its three defects do not explain. Two seeds: other values, other pages."""
    checks = ["--checks", *EXCLUDED[1:], "--no-conformance"]
    with drf.serve(variant, realm_url=f"{realm}/realms/shop", server=SYNC) as origin:
        for seed in SEEDS[:2]:
            outcome = contract(origin, realm, tmp_path / str(seed), *checks, "--seed", str(seed), excluded=[])
            assert outcome.findings.get("errors") == [], f"seed {seed}: {outcome.findings.get('errors')}"
            judged = {entry["check"] for entry in outcome.findings.get("passes", [])}
            judged |= {violation["check"] for violation in outcome.findings.get("violations", [])}
            assert judged >= set(EXCLUDED[1:]), f"seed {seed}: only {sorted(judged)} judged"
            found = outcome.findings.get("violations", [])
            assert [violation for violation in found if defect_explaining(violation) is None] == [], f"seed {seed}"
            expected = (0,) if variant == "correct" else (0, 1)  # the realistic one: its defects, if these see them
            assert outcome.code in expected, f"seed {seed}: " + outcome.stdout[-6000:] + outcome.stderr


def reported(check: str, operation: str, url: str, response: str) -> dict[str, Any]:
    return {"check": check, "operation": operation, "curl": f"curl -X GET '{url}'", "response": response}


HTML_404 = "HTTP 404\ncontent-type: text/html; charset=utf-8\n\n<h1>Not Found</h1>"
HTML_500 = "HTTP 500\ncontent-type: text/html; charset=utf-8\n\n<h1>Server Error (500)</h1>"


def test_only_the_realistic_defects_explain_a_report() -> None:
    base = "http://127.0.0.1:1/shop/api/v1"
    assert defect_explaining(reported("referential_rules", "delete_product", f"{base}/products/S1/", "")) == (
        "unprotected_fk"
    )
    assert defect_explaining(reported("not_a_server_error", "delete_product", f"{base}/products/S1/", HTML_500)) == (
        "unprotected_fk"
    )
    assert defect_explaining(
        reported("content_type_conformance", "get_product", f"{base}/products/S.1/", HTML_404)
    ) == ("default_lookup")
    assert defect_explaining(reported("item_identity", "update_product", f"{base}/products/S1/", "HTTP 200")) == (
        "writable_pk"
    )
    json_404 = "HTTP 404\ncontent-type: application/json\n\n{}"
    unexplained = [
        reported("not_a_server_error", "get_product", f"{base}/products/S1/", HTML_500),  # a 500 not on DELETE
        reported("content_type_conformance", "get_product", f"{base}/products/S1/", HTML_404),  # no "." in the path
        reported("content_type_conformance", "get_product", f"{base}/products/S.1/", json_404),  # the view's 404
        reported("patch_locality", "patch_product", f"{base}/products/S1/", "HTTP 200"),
        reported("positive_data_acceptance", "create_customer", f"{base}/customers/", "HTTP 400"),
    ]
    assert [defect_explaining(violation) for violation in unexplained] == [None] * len(unexplained)
