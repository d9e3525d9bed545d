"""pytest integration: the same suite, the same options (`--shop-` + the CLI's names), next to a team's tests.

Installed with the package as a `pytest11` entry point, and inert until `--shop-base-url` or
`--shop-gateway-url` is given: then the session gains one test per check (`shop-contract::<check>`);
the suite runs once, on the first of them, and each test fails with the violations of its check.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from contract_tests import report, runner
from contract_tests.cli import options_from
from contract_tests.findings import DOMAIN_CHECKS, SCHEMATHESIS_CHECKS, Ledger
from contract_tests.options import Options

VALUED = (
    "base-url",
    "gateway-url",
    "api-key",
    "token",
    "token-url",
    "client-id",
    "client-secret",
    "spec",
    "profile",
    "max-examples",
    "workers",
    "seed",
    "junit-xml",
    "report-dir",
)
REPEATED = ("include", "strict-check")
FLAGS = ("strict", "no-domain", "no-conformance")
LEDGER = pytest.StashKey[Ledger]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("shop-contract", "contract suite of the shop service (see shop-contract --help)")
    for name in VALUED:
        group.addoption(f"--shop-{name}", dest=f"shop_{name.replace('-', '_')}")
    for name in REPEATED:
        group.addoption(f"--shop-{name}", dest=f"shop_{name.replace('-', '_')}", action="append", default=[])
    for name in FLAGS:
        group.addoption(f"--shop-{name}", dest=f"shop_{name.replace('-', '_')}", action="store_true")


def cli_arguments(config: pytest.Config) -> list[str]:
    """The pytest options, as the CLI's arguments (so both parse and validate them the same way)."""
    argv = ["--quiet"]
    for name in VALUED:
        value = config.getoption(f"shop_{name.replace('-', '_')}")
        if value is not None:
            argv += [f"--{name}", str(value)]
    for name in REPEATED:
        for value in config.getoption(f"shop_{name.replace('-', '_')}"):
            argv += [f"--{name}", value]
    argv += [f"--{name}" for name in FLAGS if config.getoption(f"shop_{name.replace('-', '_')}")]
    return argv


class ContractCheck(pytest.Item):
    """One check of the suite; passes when the run found no violation of it."""

    def __init__(self, *, options: Options, check: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.options = options
        self.check = check

    def runtest(self) -> None:
        if LEDGER not in self.config.stash:
            ledger = runner.run(self.options, lambda line: None)
            report.write(ledger, self.options)
            self.config.stash[LEDGER] = ledger
        ledger = self.config.stash[LEDGER]
        if self.check == "run_completed" and ledger.errors:
            raise AssertionError("\n".join(ledger.errors))
        found = [v for v in ledger.violations if v.check == self.check]
        if found:
            raise AssertionError("\n\n".join(report.describe(n, v) for n, v in enumerate(found, 1)))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        return str(excinfo.value)

    def reportinfo(self) -> tuple[Path, int, str]:
        return Path(__file__), 0, f"shop-contract::{self.check}"


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("shop_base_url") is None and config.getoption("shop_gateway_url") is None:
        return
    options = options_from(cli_arguments(config))
    checks = ("run_completed", *SCHEMATHESIS_CHECKS, *DOMAIN_CHECKS, *sorted(options.enabled_strict))
    items.extend(
        ContractCheck.from_parent(session, name=f"shop-contract::{check}", options=options, check=check)
        for check in checks
    )
