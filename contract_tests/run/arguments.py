"""The `shop-contract` command line as data: its parsers, and the `Options` an argv makes.

The CLI (`cli.py`) and the pytest plugin (`pytest_plugin.py`) both read options here, so that neither
imports the other. The plugin offers every option with `--shop-` before it. Its import stays cheap,
which matters since it runs in every pytest session.

Secrets may come from the environment (`SECRET_VARIABLES`), so that no command line or CI log holds
them.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from contract_tests.check_names import RACE_TRIES, STRICT_CHECKS
from contract_tests.options import DEFAULT_DEADLINE, DEFAULT_MAX_RESPONSE_SIZE, PROFILES, Options
from contract_tests.sharding import parse_shard
from contract_tests.usage import UsageError

SECRET_VARIABLES = {
    "api_key": "SHOP_CONTRACT_API_KEY",
    "token": "SHOP_CONTRACT_TOKEN",
    "client_secret": "SHOP_CONTRACT_CLIENT_SECRET",
}
"""The option each environment variable stands for when the flag is not given."""


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of printing usage and exiting, so every error is one line."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message)


class VersionAsked(Exception):
    """--version was asked for."""


class _VersionAction(argparse.Action):
    def __call__(self, *args: object, **kwargs: object) -> None:
        raise VersionAsked


def add_target(p: argparse.ArgumentParser) -> argparse._ArgumentGroup:
    """The target's options, shared by a run and `replay`. They say where it is, which contract, and how to
    trust it."""
    target = p.add_argument_group("target")
    target.add_argument("--base-url", help="the backend's mount point, e.g. http://127.0.0.1:8000/shop/api/v1")
    target.add_argument("--gateway-url", help="the gateway's mount point, e.g. http://127.0.0.1:8000/customers/v1")
    target.add_argument("--spec", type=Path, help="the contract (default: the one installed with the suite)")
    target.add_argument(
        "--ca-bundle",
        type=Path,
        metavar="FILE",
        help="CA certificates (PEM) to verify a TLS target against (default: SSL_CERT_FILE, REQUESTS_CA_BUNDLE)",
    )
    target.add_argument(
        "--insecure", action="store_true", help="do not verify TLS certificates (a self-signed development one)"
    )
    return target


def add_credentials(p: argparse.ArgumentParser) -> None:
    """The credentials' options, shared by a run and `replay`. Each secret may come from SECRET_VARIABLES."""
    creds = p.add_argument_group("credentials")
    creds.add_argument("--api-key", help="sent as X-API-Key (backend only; or SHOP_CONTRACT_API_KEY)")
    creds.add_argument("--token", help="a JWT, sent as Authorization: Bearer (or SHOP_CONTRACT_TOKEN)")
    creds.add_argument("--token-url", help="an OpenID Connect token endpoint (client_credentials grant)")
    creds.add_argument("--client-id", help="the client of --token-url")
    creds.add_argument("--client-secret", help="the secret of --client-id")


def secrets_from_environment(args: argparse.Namespace, environ: Mapping[str, str]) -> None:
    """Fill each secret not given as a flag from its variable. A realm's token replaces a static one."""
    for name, variable in SECRET_VARIABLES.items():
        realm_given = name == "token" and args.token_url is not None
        if getattr(args, name) is None and variable in environ and not realm_given:
            setattr(args, name, environ[variable])


def parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="shop-contract", description="Check a shop service against its OpenAPI contract.", allow_abbrev=False
    )
    p.add_argument("--version", action=_VersionAction, nargs=0, help="print the suite's version and exit")
    target = add_target(p)
    target.add_argument(
        "--consumer",
        type=Path,
        metavar="FILE",
        help="verify this consumer contract (shop-mock contract --out FILE): replayed on the target, "
        "or without a target, read against --spec alone",
    )
    add_credentials(p)
    run = p.add_argument_group("run")
    run.add_argument("--profile", choices=sorted(PROFILES), default="default", help="effort (fast: a quick gate)")
    run.add_argument("--max-examples", type=int, help="examples per operation and phase (overrides the profile)")
    run.add_argument(
        "--workers",
        type=workers,
        default=None,
        metavar="N|auto",
        help="requests in flight at most (default: auto, sized from the target's latency and capacity; 1 on loopback)",
    )
    run.add_argument(
        "--max-time",
        type=float,
        metavar="SECONDS",
        help="a budget: end with what was found by then, listing what was not reached (a partial verdict)",
    )
    run.add_argument(
        "--race-tries",
        type=int,
        default=RACE_TRIES,
        metavar="N",
        help=f"tries of each check of concurrent writes at most (default {RACE_TRIES}: a race lost one try in ten "
        "is then found in more than 99 runs in 100, as 1 - 0.9^44 > 0.99); through the pacer, within --max-time",
    )
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
        help=f"total deadline of one request: connect, headers and body (default {DEFAULT_DEADLINE:g}; the realm's"
        f" token and keys get at least {DEFAULT_DEADLINE:g})",
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
    _baseline_options(p)
    add_export(out)
    return p


def workers(text: str) -> int | None:
    """`--workers`: `auto` (None) or a whole number. The range is checked with the other options."""
    if text.strip().lower() == "auto":
        return None
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected 'auto' or a whole number, got {text[:40]!r}") from None


def _baseline_options(p: argparse.ArgumentParser) -> None:
    """The accepted findings' options, for a run and for `merge` alike."""
    gate = p.add_argument_group("accepted findings")
    gate.add_argument(
        "--baseline",
        type=Path,
        metavar="FILE",
        help="accepted violations (YAML, reviewed like code): fail only on violations not in it",
    )
    gate.add_argument(
        "--baseline-strict",
        action="store_true",
        help="also fail on entries a complete whole run did not reproduce, and on expired ones",
    )
    gate.add_argument(
        "--baseline-update",
        action="store_true",
        help="add the violations found that the baseline lacks (reason: a placeholder to write)",
    )
    gate.add_argument(
        "--baseline-prune",
        action="store_true",
        help="drop the entries this run did not reproduce (a whole run only, applied when it completes)",
    )


def add_export(group: argparse._ArgumentGroup | argparse.ArgumentParser) -> None:
    group.add_argument(
        "--export-tests",
        type=Path,
        metavar="DIR",
        help="write each violation as a pytest test (DIR/test_contract_violations.py: httpx only, credentials "
        "from SHOP_CONTRACT_API_KEY / SHOP_CONTRACT_TOKEN)",
    )


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
    _baseline_options(p)
    add_export(p)
    return p


def replay_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="shop-contract replay",
        description="Send a run's violations again (their setup requests, then the failing one) and judge the "
        "answer with the same check: FIXED or STILL FAILING.",
        allow_abbrev=False,
    )
    p.add_argument("ids", nargs="*", metavar="ID", help="a violation's id, as the reports show it")
    p.add_argument("--all", action="store_true", help="every violation of the report")
    p.add_argument("--report-dir", type=Path, metavar="DIR", required=True, help="the run's --report-dir")
    target = add_target(p)
    target.description = "default: the targets the run recorded"
    add_credentials(p)
    p.add_argument(
        "--request-timeout",
        type=float,
        default=DEFAULT_DEADLINE,
        metavar="SECONDS",
        help=f"total deadline of one request (default {DEFAULT_DEADLINE:g})",
    )
    add_export(p)
    return p


def replay_arguments(argv: Sequence[str], environ: Mapping[str, str] | None = None) -> argparse.Namespace:
    """`shop-contract replay` arguments, secrets filled from the environment as a run's are."""
    args = replay_parser().parse_args(argv)
    if bool(args.ids) == args.all:
        raise UsageError("give violation ids or --all (not both)")
    secrets_from_environment(args, os.environ if environ is None else environ)
    return args


def options_from(argv: Sequence[str], environ: Mapping[str, str] | None = None) -> Options:
    args = parser().parse_args(argv)
    secrets_from_environment(args, os.environ if environ is None else environ)
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
        max_time=args.max_time,
        race_tries=args.race_tries,
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
        baseline=args.baseline,
        baseline_update=args.baseline_update,
        baseline_prune=args.baseline_prune,
        baseline_strict=args.baseline_strict,
        export_tests=args.export_tests,
    )
