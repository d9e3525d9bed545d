"""`shop-contract` / `python -m contract_tests`: options -> a run -> an exit code.

Exit 0: no violation; 1: violations found; 2: could not run (bad arguments, unreadable spec,
unreachable target, credentials refused), said in one line on stderr.

Importing this module is cheap (the pytest plugin builds its options from `parser()` in every pytest
session): the suite itself is imported by `main` only.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from contract_tests.findings import STRICT_CHECKS
from contract_tests.options import PROFILES, Options, UsageError
from shop_contract.document import SpecError

EXIT_OK, EXIT_VIOLATIONS, EXIT_CANNOT_RUN = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of printing usage and exiting, so every error is one line."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message)


def parser() -> argparse.ArgumentParser:
    p = _Parser(prog="shop-contract", description="Check a shop service against its OpenAPI contract.")
    target = p.add_argument_group("target")
    target.add_argument("--base-url", help="the backend's mount point, e.g. http://127.0.0.1:8000/shop/api/v1")
    target.add_argument("--gateway-url", help="the gateway's mount point, e.g. http://127.0.0.1:8000/customers/v1")
    target.add_argument("--spec", type=Path, help="the contract (default: the one installed with the suite)")
    creds = p.add_argument_group("credentials")
    creds.add_argument("--api-key", help="sent as X-API-Key (backend only)")
    creds.add_argument("--token", help="a JWT, sent as Authorization: Bearer")
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
    run.add_argument("--request-timeout", type=float, default=10.0, help="seconds per request (default: 10)")
    run.add_argument("--quiet", action="store_true", help="no progress lines")
    out = p.add_argument_group("output")
    out.add_argument("--junit-xml", type=Path, metavar="FILE", help="JUnit XML, a test case per operation and check")
    out.add_argument("--report-dir", type=Path, metavar="DIR", help="summary.txt and junit.xml")
    return p


def options_from(argv: Sequence[str]) -> Options:
    args = parser().parse_args(argv)
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
        quiet=args.quiet,
    )


def main(argv: Sequence[str] | None = None) -> int:
    from contract_tests import report, runner
    from contract_tests.conformance import ConformanceError
    from contract_tests.target import TargetError

    try:
        options = options_from(sys.argv[1:] if argv is None else argv)
        ledger = runner.run(options, (lambda line: None) if options.quiet else (lambda line: print(line, flush=True)))
    except (UsageError, SpecError, TargetError, ConformanceError) as exc:
        print(f"shop-contract: error: {exc}", file=sys.stderr)
        return EXIT_CANNOT_RUN
    except KeyboardInterrupt:
        print("shop-contract: interrupted", file=sys.stderr)
        return EXIT_CANNOT_RUN
    print(report.summary(ledger))
    for path in report.write(ledger, options):
        print(f"wrote {path}")
    if ledger.violations:
        return EXIT_VIOLATIONS
    return EXIT_CANNOT_RUN if ledger.errors else EXIT_OK
