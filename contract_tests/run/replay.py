"""`shop-contract replay ID... --report-dir DIR`: a run's violations sent again and judged by the same check.

The report's findings.json is read as any input is, bounded and against its schema
(outcome/findings_file.py). Each violation is found by its id. It is judged on today's target, the
recorded one or `--base-url` / `--gateway-url`, with the run's credentials options.

- A check that one answer decides, and a transport check, are judged again by their requests.
  These are Schemathesis' response checks and this suite's registered ones. The setup requests and
  the failing request are sent again, with fresh identifiers where a recorded one exists already
  (outcome/standalone.py). Then the answer is judged (judge/rejudge.py).
- A dedicated domain test runs again, narrowed to the violation's operation and check (`--include`,
  `--checks`), so that the same rule judges the same operation. Where the rule has a stand-alone
  form (outcome/standalone.py, as exported tests assert it), the recorded requests are sent again
  too, and FIXED needs both. Both are needed because a test run on a target that a run left items
  in may take another path than the recorded one.
- A check that needs the generation's context, or a consumer contract's check, is NOT JUDGED, and the
  replay says how to check it again.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

import httpx

from contract_tests.check_names import CONSUMER_CHECKS, STRICT_CHECKS, TRANSPORT_CHECKS
from contract_tests.client.bounded import ResponseTooLarge
from contract_tests.client.bounded_httpx import httpx_client, send_httpx
from contract_tests.client.surface import Surface
from contract_tests.client.target import build_target
from contract_tests.client.under_test import Target
from contract_tests.judge import rejudge
from contract_tests.options import Options
from contract_tests.outcome import export_tests, findings_file, merge, standalone
from contract_tests.outcome.findings import Key, Ledger, Violation, describe_response
from contract_tests.outcome.findings_file import FindingsError
from contract_tests.outcome.reproduce import NotACurl, recorded_request
from contract_tests.redact import Redactor, escape
from contract_tests.spec import JSON, Spec

FIXED, STILL_FAILING, NOT_JUDGED = "FIXED", "STILL FAILING", "NOT JUDGED"
SHOWN_ID = 20
"""Characters of an unknown id quoted in an error."""
RunSuite = Callable[[Options, Callable[[str], None]], Ledger]
"""One run of the suite, options in and a ledger out (`contract_tests.run.runner.run`)."""


@dataclass(frozen=True)
class Replaying:
    """What judging each violation again needs, the same for all of them: the contract, the options, the
    target today, the base URLs the run recorded, and the suite's run (`RunSuite`) for a domain test."""

    spec: Spec
    options: Options
    target: Target
    recorded: Mapping[str, str]
    run: RunSuite


class ReplayError(Exception):
    """The replay cannot be made: no such report or id, the target unreachable, credentials refused."""


@dataclass(frozen=True)
class Verdict:
    id: str
    violation: Violation
    outcome: str
    """FIXED, STILL FAILING or NOT JUDGED."""
    rule: str = ""
    """The rule broken (STILL FAILING), or why it could not be judged (NOT JUDGED)."""
    response: str = ""
    """The answer judged, as evidence shows it."""


def read(report_dir: Path) -> tuple[Ledger, dict[str, Violation]]:
    """The run a report directory holds, and its violations by id."""
    path = report_dir / merge.FILE
    if not report_dir.is_dir():
        raise ReplayError(f"{report_dir}: no such report directory")
    try:
        document = findings_file.load(path)
    except OSError as exc:
        raise ReplayError(f"cannot read {path}: {exc.strerror or exc}") from None
    except FindingsError as exc:
        raise ReplayError(str(exc)) from None
    ledger = merge.ledger_of(document)
    return ledger, {entry["id"]: v for entry, v in zip(document["violations"], ledger.violations, strict=True)}


def chosen(by_id: Mapping[str, Violation], ids: list[str], everything: bool, report_dir: Path) -> dict[str, Violation]:
    """The violations asked for, by id; ReplayError naming the ids the report does not hold."""
    if everything:
        return dict(by_id)
    unknown = [name for name in ids if name not in by_id]
    if unknown:
        shown = ", ".join(escape(name[:SHOWN_ID]) for name in unknown)
        raise ReplayError(f"no violation with id {shown} in {report_dir / merge.FILE}")
    return {name: by_id[name] for name in dict.fromkeys(ids)}


CREDENTIALS = {"api_key": "--api-key", "token": "--token", "token_url": "--token-url"}
"""What sends the user's credentials to the target: a secret (or its SHOP_CONTRACT_* variable), or a grant."""


def options_of(args: argparse.Namespace, recorded: Mapping[str, str], report: Path) -> Options:
    """A run's options for the target to replay on.

    The target is the URLs given (`--base-url`, `--gateway-url`), else the ones the run recorded, but
    those only without credentials. A report directory may be anyone's, such as a CI artifact of a
    fork's pull request. So the user's credentials go only to a target named on the command line."""
    given = args.base_url is not None or args.gateway_url is not None
    secrets = [flag for name, flag in CREDENTIALS.items() if getattr(args, name)]
    if not given and secrets:
        raise ReplayError(
            f"credentials are set ({', '.join(secrets)}, or a SHOP_CONTRACT_* variable) and no target is given: "
            f"name it with --base-url or --gateway-url (replay sends credentials only to a target named on the "
            f"command line, never to the one {report / merge.FILE} records)"
        )
    return Options(
        base_url=args.base_url if given else recorded.get("backend"),
        gateway_url=args.gateway_url if given else recorded.get("gateway"),
        api_key=args.api_key,
        token=args.token,
        token_url=args.token_url,
        client_id=args.client_id,
        client_secret=args.client_secret,
        spec=args.spec,
        request_timeout=args.request_timeout,
        ca_bundle=args.ca_bundle,
        insecure=args.insecure,
        quiet=True,
    )


def moves(recorded: Mapping[str, str], options: Options) -> dict[str, str]:
    """Each recorded surface's base URL and the one it is replayed on (the surfaces given)."""
    current = {"backend": options.base_url, "gateway": options.gateway_url}
    return {recorded[name]: url for name, url in current.items() if url and name in recorded}


def refuse_elsewhere(violations: Mapping[str, Violation], recorded: Mapping[str, str], options: Options) -> None:
    """Raise ReplayError, before anything is sent, when a recorded request would go elsewhere.

    A request a violation records, its setup or itself, must go to an origin of the target being
    replayed. Anywhere else, it would carry the user's credentials there."""
    targets = {"backend": options.base_url, "gateway": options.gateway_url}
    given = [url for url in targets.values() if url]
    bases = moves(recorded, options)
    for name, violation in violations.items():
        if not targets.get(violation.surface):
            continue  # not judged: its surface is not given, nothing of it is sent
        for curl in (*violation.setup, violation.curl):
            try:
                step = recorded_request(curl)
            except NotACurl:
                continue  # not judged either: it cannot be sent
            stray = standalone.elsewhere([{**step, "url": standalone.rebased(step["url"], bases)}], given)
            if stray is not None:
                raise ReplayError(
                    f"violation {escape(name[:SHOWN_ID])} records a request to {escape(stray[:80])}, which is not "
                    "the target being replayed: refused, nothing sent"
                )


def replay(
    args: argparse.Namespace, run: RunSuite, exported: Callable[[Path], None] = lambda path: None
) -> Iterator[Verdict]:
    """Each asked-for violation's verdict on the target, in the report's order (`--export-tests`: the file
    is written first, `exported` told its path). `run` is the suite's run (`run.runner.run`), for a domain
    test run again: given by the caller, so that replaying stays beside the runner, not above it."""
    ledger, by_id = read(args.report_dir)
    violations = chosen(by_id, args.ids, args.all, args.report_dir)
    options = options_of(args, ledger.run.targets, args.report_dir)
    refuse_elsewhere(violations, ledger.run.targets, options)
    spec = Spec.load(options.spec)
    if args.export_tests is not None:
        exported(export_tests.write(list(violations.values()), ledger.run.targets, spec, args.export_tests))
    replaying = Replaying(spec, options, build_target(options, spec), ledger.run.targets, run)
    for name, violation in violations.items():
        found = judged(replaying, name, violation)
        shown = Redactor(replaying.target.keyring.secrets())  # what the target answered, masked and escaped
        yield replace(found, rule=shown(found.rule), response=shown(found.response))


def judged(replaying: Replaying, name: str, violation: Violation) -> Verdict:
    spec, options = replaying.spec, replaying.options
    surface = replaying.target.surface(violation.surface)
    check = violation.check
    if surface is None:
        flag = "--base-url" if violation.surface == "backend" else "--gateway-url"
        return Verdict(name, violation, NOT_JUDGED, f"its surface, the {violation.surface}, is not given ({flag})")
    if check in CONSUMER_CHECKS:
        return Verdict(name, violation, NOT_JUDGED, "a consumer contract's verdict: verify it again with --consumer")
    if check in rejudge.NEEDS_CONTEXT:
        again = f"shop-contract --include {violation.operation} --checks {check}"
        why = f"{check} judges more than one answer (what was generated, what came before): run `{again}`"
        return Verdict(name, violation, NOT_JUDGED, why)
    bases = moves(replaying.recorded, options)
    if check in TRANSPORT_CHECKS or rejudge.judges_one_answer(check):
        return resent(replaying, surface, bases, name, violation)
    verdict = rerun(options, replaying.run, name, violation)
    expect = export_tests.expectations(spec, spec.operations.get(violation.operation), violation)
    if verdict.outcome != FIXED or export_tests.skipped(violation, expect):
        return verdict
    # The test ran again on the target as it is now (which may skip what the recorded requests did, e.g. an
    # item of the run's own left behind): the recorded requests must hold the rule too.
    recorded_requests = resent(replaying, surface, bases, name, violation, expect)
    return recorded_requests if recorded_requests.outcome == STILL_FAILING else verdict


def resent(
    replaying: Replaying,
    surface: Surface,
    bases: Mapping[str, str],
    name: str,
    violation: Violation,
    expect: JSON | None = None,
) -> Verdict:
    """Send the violation's requests again, and judge the last answer by its check.

    Each recorded surface's requests go to the one given (`bases` maps a recorded base URL to the
    current one). Given `expect`, the answer is judged by the check's rule as an exported test states
    it (outcome/standalone.py)."""
    spec, target = replaying.spec, replaying.target
    try:
        recorded = [recorded_request(curl) for curl in (*violation.setup, violation.curl)]
    except NotACurl as exc:
        return Verdict(name, violation, NOT_JUDGED, f"its request cannot be sent again: {exc}")
    steps = [{**step, "url": standalone.rebased(step["url"], bases)} for step in recorded]
    op = spec.operations.get(violation.operation)
    if op is None:
        return Verdict(name, violation, NOT_JUDGED, f"the spec has no operation {violation.operation}")
    credentials = (target.credentials.api_key, target.keyring.token)
    with httpx_client(target.limits) as client:

        def send(method: str, url: str, headers: list[tuple[str, str]], body: bytes | None) -> httpx.Response:
            return send_httpx(client, client.build_request(method, url, headers=headers, content=body), target.limits)

        try:
            exchanges = standalone.reenact(steps, export_tests.collections(spec), surface.base_url, credentials, send)
        except (httpx.TimeoutException, ResponseTooLarge) as exc:
            caught = "response_time" if isinstance(exc, httpx.TimeoutException) else "response_size"
            if violation.check == caught:
                return Verdict(name, violation, STILL_FAILING, violation.rule, "(no whole answer within the limits)")
            return Verdict(name, violation, NOT_JUDGED, f"no answer to judge: {exc or type(exc).__name__}")
        except httpx.HTTPError as exc:
            raise ReplayError(
                f"cannot reach the {surface.name} at {surface.base_url}: {exc or type(exc).__name__}"
            ) from exc
    request, response = exchanges[-1]
    if response.status_code == 401 and any(standalone.MASKED in value for _, value in request["headers"]):
        raise ReplayError(
            f"the {surface.name} refused the credentials (HTTP 401 on {request['method']} {request['url']})"
        )
    shown = describe_response(response.status_code, response.headers.raw, response.content)
    if violation.check in TRANSPORT_CHECKS:
        return Verdict(name, violation, FIXED, response=shown)
    if expect is not None:
        rule = standalone.broken(violation.check, expect, exchanges)
    else:
        rule = rejudge.broken(spec, op, violation.check, surface.base_url, request, response)
    return Verdict(name, violation, FIXED if rule is None else STILL_FAILING, rule or "", shown)


def rerun(options: Options, run: RunSuite, name: str, violation: Violation) -> Verdict:
    """The domain test that found the violation, run again on its operation and check alone."""
    check = violation.check
    narrowed = replace(
        options,
        include=(violation.operation,),
        checks=(check,),
        conformance=False,
        strict_checks=(check,) if check in STRICT_CHECKS else (),
    )
    ledger = run(narrowed, lambda line: None)
    if ledger.aborted:
        raise ReplayError(ledger.aborted)
    key = Key(violation.surface, violation.operation, check)
    again = [v for v in ledger.violations if Key(v.surface, v.operation, v.check) == key]
    if again:
        return Verdict(name, violation, STILL_FAILING, again[0].rule, again[0].response)
    if key in ledger.passes:
        return Verdict(name, violation, FIXED)
    if ledger.errors:
        return Verdict(name, violation, NOT_JUDGED, f"the check could not complete: {ledger.errors[0]}")
    skipped = [s.reason for s in ledger.not_exercised if s.check == check and s.operation in (violation.operation, "-")]
    why = f": {skipped[0]}" if skipped else ""
    return Verdict(name, violation, NOT_JUDGED, f"{check} did not judge {violation.operation} again{why}")
