"""`shop-contract` / `python -m contract_tests`: options -> a run -> an exit code.

Exit 0: no violation; 1: violations found; 2: could not run or could not finish (bad arguments,
unreadable spec, unreachable target or not this API, credentials refused or lost during the run, an
internal error, a part of the run that could not complete: even with violations found, the verdict is
incomplete), said in one line on stderr; the reports are written whenever testing started.
Secrets may come from the environment (SECRET_VARIABLES) so that no command line or CI log holds them.

Importing this module is cheap (the pytest plugin builds its options from `parser()` in every pytest
session): the suite itself is imported by `main` only.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from contract_tests.findings import STRICT_CHECKS, Ledger
from contract_tests.options import DEFAULT_DEADLINE, DEFAULT_MAX_RESPONSE_SIZE, PROFILES, Options, UsageError
from contract_tests.redact import Redactor, escape
from contract_tests.sharding import parse_shard
from shop_contract.document import SpecError

EXIT_OK, EXIT_VIOLATIONS, EXIT_CANNOT_RUN = 0, 1, 2
SECRET_VARIABLES = {
    "api_key": "SHOP_CONTRACT_API_KEY",
    "token": "SHOP_CONTRACT_TOKEN",
    "client_secret": "SHOP_CONTRACT_CLIENT_SECRET",
}
"""The option each environment variable stands for when the flag is not given."""
INSECURE_WARNING = "shop-contract: warning: --insecure: TLS certificates are not verified; anyone between may answer"


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of printing usage and exiting, so every error is one line."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message)


class _Version(Exception):
    """--version was asked for."""


class _VersionAction(argparse.Action):
    def __call__(self, *args: object, **kwargs: object) -> None:
        raise _Version


def parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="shop-contract", description="Check a shop service against its OpenAPI contract.", allow_abbrev=False
    )
    p.add_argument("--version", action=_VersionAction, nargs=0, help="print the suite's version and exit")
    target = p.add_argument_group("target")
    target.add_argument("--base-url", help="the backend's mount point, e.g. http://127.0.0.1:8000/shop/api/v1")
    target.add_argument("--gateway-url", help="the gateway's mount point, e.g. http://127.0.0.1:8000/customers/v1")
    target.add_argument("--spec", type=Path, help="the contract (default: the one installed with the suite)")
    target.add_argument(
        "--consumer",
        type=Path,
        metavar="FILE",
        help="verify this consumer contract (shop-mock contract --out FILE): replayed on the target, "
        "or without a target, read against --spec alone",
    )
    target.add_argument(
        "--ca-bundle",
        type=Path,
        metavar="FILE",
        help="CA certificates (PEM) to verify a TLS target against (default: SSL_CERT_FILE, REQUESTS_CA_BUNDLE)",
    )
    target.add_argument(
        "--insecure", action="store_true", help="do not verify TLS certificates (a self-signed development one)"
    )
    creds = p.add_argument_group("credentials")
    creds.add_argument("--api-key", help="sent as X-API-Key (backend only; or SHOP_CONTRACT_API_KEY)")
    creds.add_argument("--token", help="a JWT, sent as Authorization: Bearer (or SHOP_CONTRACT_TOKEN)")
    creds.add_argument("--token-url", help="an OpenID Connect token endpoint (client_credentials grant)")
    creds.add_argument("--client-id", help="the client of --token-url")
    creds.add_argument("--client-secret", help="the secret of --client-id")
    run = p.add_argument_group("run")
    run.add_argument("--profile", choices=sorted(PROFILES), default="default", help="effort (fast: a quick gate)")
    run.add_argument("--max-examples", type=int, help="examples per operation and phase (overrides the profile)")
    run.add_argument("--workers", type=int, default=1, help="concurrent Schemathesis workers (default: 1)")
    run.add_argument("--seed", type=int, help="makes the run repeatable")
    run.add_argument("--include", action="append", default=[], metavar="OPERATION_ID", help="repeatable")
    run.add_argument("--strict", action="store_true", help=f"turn on every strict check: {', '.join(STRICT_CHECKS)}")
    run.add_argument("--strict-check", action="append", default=[], choices=STRICT_CHECKS, help="one strict check")
    run.add_argument("--no-domain", action="store_true", help="skip the dedicated domain tests")
    run.add_argument("--no-conformance", action="store_true", help="skip the Schemathesis phases")
    run.add_argument("--checks", nargs="+", default=[], metavar="NAME", help="judge only these checks")
    run.add_argument("--exclude-checks", nargs="+", default=[], metavar="NAME", help="do not judge these checks")
    run.add_argument(
        "--request-timeout",
        type=float,
        default=DEFAULT_DEADLINE,
        metavar="SECONDS",
        help=f"total deadline of one request: connect, headers and body (default {DEFAULT_DEADLINE:g})",
    )
    run.add_argument(
        "--max-response-size",
        type=int,
        default=DEFAULT_MAX_RESPONSE_SIZE,
        metavar="BYTES",
        help=f"largest response body, decompressed; larger is a violation (default {DEFAULT_MAX_RESPONSE_SIZE})",
    )
    run.add_argument("--wait", type=float, default=0.0, metavar="SECONDS", help="wait for a target still starting")
    run.add_argument(
        "--shard",
        type=parse_shard,
        metavar="K/N",
        help="run the K-th of N parts of the work (CI runners in parallel; combine with `shop-contract merge`)",
    )
    run.add_argument("--quiet", action="store_true", help="no progress lines")
    run.add_argument("--verbose", action="store_true", help="the summary in full, each violation with its evidence")
    out = p.add_argument_group("output")
    out.add_argument("--junit-xml", type=Path, metavar="FILE", help="JUnit XML, a test case per operation and check")
    out.add_argument(
        "--report-dir", type=Path, metavar="DIR", help="report.html, summary.txt, junit.xml and findings.json"
    )
    return p


def merge_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="shop-contract merge",
        description="Combine the reports of a run's shards (--shard K/N --report-dir DIR) into one.",
        allow_abbrev=False,
    )
    p.add_argument("directories", nargs="+", type=Path, metavar="DIR", help="each shard's --report-dir")
    p.add_argument("--junit-xml", type=Path, metavar="FILE", help="the merged JUnit XML")
    p.add_argument(
        "--report-dir", type=Path, metavar="DIR", help="the merged report.html, summary.txt, junit.xml, findings.json"
    )
    p.add_argument("--verbose", action="store_true", help="the summary in full, each violation with its evidence")
    return p


def options_from(argv: Sequence[str], environ: Mapping[str, str] | None = None) -> Options:
    args = parser().parse_args(argv)
    environ = os.environ if environ is None else environ
    for name, variable in SECRET_VARIABLES.items():
        realm_given = name == "token" and args.token_url is not None  # a realm's token replaces a static one
        if getattr(args, name) is None and variable in environ and not realm_given:
            setattr(args, name, environ[variable])
    return Options(
        base_url=args.base_url,
        gateway_url=args.gateway_url,
        api_key=args.api_key,
        token=args.token,
        token_url=args.token_url,
        client_id=args.client_id,
        client_secret=args.client_secret,
        spec=args.spec,
        profile=args.profile,
        max_examples=args.max_examples,
        workers=args.workers,
        seed=args.seed,
        include=tuple(args.include),
        strict=args.strict,
        strict_checks=tuple(args.strict_check),
        domain=not args.no_domain,
        conformance=not args.no_conformance,
        junit_xml=args.junit_xml,
        report_dir=args.report_dir,
        request_timeout=args.request_timeout,
        max_response_size=args.max_response_size,
        wait=args.wait,
        checks=tuple(args.checks),
        exclude_checks=tuple(args.exclude_checks),
        quiet=args.quiet,
        verbose=args.verbose,
        shard=args.shard,
        ca_bundle=args.ca_bundle,
        insecure=args.insecure,
        consumer=args.consumer,
    )


def _say(line: str) -> None:
    print(line, flush=True)


def _fail(message: str) -> int:
    print(f"shop-contract: error: {escape(message)}", file=sys.stderr)
    return EXIT_CANNOT_RUN


def verdict(ledger: Ledger) -> int:
    """The exit code of a finished (or stopped) run, with its one line on stderr when it is 2.

    A part of the run that could not complete makes the verdict incomplete: 2, even with violations found.
    """
    shown = Redactor(ledger.secrets)
    if ledger.aborted:
        return _fail(shown(ledger.aborted))
    if ledger.errors:
        return _fail(shown(incomplete(ledger)))
    if ledger.violations:
        return EXIT_VIOLATIONS
    return EXIT_OK


def incomplete(ledger: Ledger) -> str:
    """One line: how many parts could not complete, the first one's cause and request, the other causes."""
    first, causes = ledger.errors[0], ledger.causes()
    on = f"{first.cause} on {first.request}" if first.request else f"{first.cause} in [{first.surface}] {first.where}"
    more = len(ledger.errors) - 1
    counted = ", ".join(f"{cause} {count}" for cause, count in causes.items())
    tail = f"and {more} more of {len(causes)} cause(s): {counted}; " if more else ""
    return f"{len(ledger.errors)} part(s) of the run could not complete; first: {on} ({tail}see Errors above)"


def merge(argv: Sequence[str]) -> int:
    """`shop-contract merge DIR... [--report-dir OUT] [--junit-xml FILE]`: the shards' reports as one."""
    from contract_tests import merge, report

    try:
        args = merge_parser().parse_args(argv)
        ledger = merge.combine([(directory, merge.read(directory)) for directory in args.directories])
    except (UsageError, merge.MergeError) as exc:
        return _fail(str(exc))
    try:
        written = report.write_files(ledger, args.junit_xml, args.report_dir)
    except OSError as exc:
        return _fail(f"cannot write the merged report: {exc}")
    _reported(ledger, written, args.verbose)
    return verdict(ledger)


def _reported(ledger: Ledger, written: list[Path], verbose: bool) -> None:
    """Say which files were written, then the summary, which ends with the HTML report's path."""
    from contract_tests import report, step_summary

    for path in written:
        print(f"wrote {escape(str(path))}")
    html = next((path for path in written if path.name == report.HTML), None)
    print(report.summary(ledger, verbose=verbose, html=html))
    step_summary.append(ledger, os.environ)


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "merge":
        return merge(argv[1:])
    from contract_tests import SUITE_VERSION, report, runner
    from contract_tests.conformance import ConformanceError
    from contract_tests.consumer.document import ConsumerError
    from contract_tests.keyring import CredentialsLost
    from contract_tests.target import TargetError

    try:
        options = options_from(argv)
    except _Version:
        print(f"shop-contract {SUITE_VERSION}")
        return EXIT_OK
    except UsageError as exc:
        return _fail(str(exc))
    if options.insecure:
        print(INSECURE_WARNING, file=sys.stderr)
    secrets = Redactor(tuple(s for s in (options.api_key, options.token, options.client_secret) if s))
    progress = (lambda line: None) if options.quiet else (lambda line: _say(secrets(line)))
    try:
        ledger = runner.run(options, progress)
    except (UsageError, SpecError, TargetError, ConformanceError, CredentialsLost, ConsumerError) as exc:
        return _fail(secrets(str(exc)))
    except KeyboardInterrupt:
        return _fail("interrupted")
    except Exception as exc:  # the suite's own defect before testing started: still one line
        return _fail(secrets(f"internal error of the suite: {type(exc).__name__}: {exc}"))
    _reported(ledger, report.write(ledger, options), options.verbose)
    return verdict(ledger)
