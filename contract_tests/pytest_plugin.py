"""pytest entry point (`pytest11`): the CLI's options as `--shop-...` options, and nothing else until used.

Every option of `shop-contract` (`contract_tests.run.arguments.parser()`) exists here with `--shop-`
before its name. It has the same help, type and choices. So an option added to the CLI appears here
without an edit, and a bad value is pytest's usage error.

This module is loaded in every pytest session of an environment that has the suite installed, so it
imports only the CLI's parser. The suite itself (`contract_tests.run.pytest_suite`) is imported once
`--shop-base-url` or `--shop-gateway-url` is given.
"""

from __future__ import annotations

import argparse
import functools
import inspect
from collections.abc import Callable
from typing import Any

import pytest

from contract_tests.run.arguments import parser as cli_parser
from contract_tests.usage import UsageError
from shop_contract.document import SpecError

PREFIX = "shop"
TARGET_OPTIONS = ("base_url", "gateway_url")
ATTRIBUTES = ("default", "type", "choices", "help", "metavar", "nargs", "const")


def cli_actions() -> list[argparse.Action]:
    """The CLI's options that carry a value for a run (not --help, --version). argparse has no public
    accessor for a parser's actions. `_actions` has been stable since Python 3.2."""
    return [action for action in cli_parser()._actions if action.option_strings and action.default != argparse.SUPPRESS]


def shop_option(action: argparse.Action) -> str:
    return f"--{PREFIX}-{action.option_strings[-1].removeprefix('--')}"


def shop_dest(action: argparse.Action) -> str:
    return f"{PREFIX}_{action.dest}"


def checked_text(convert: Callable[[str], Any]) -> Callable[[str], str]:
    """A type that refuses what `convert` refuses, with its name in the message, and keeps the text,
    so that the value reaches the CLI's parser exactly as typed."""

    @functools.wraps(convert)
    def check(text: str) -> str:
        convert(text)
        return text

    return check


def option_attributes(action: argparse.Action) -> dict[str, Any]:
    accepted = inspect.signature(type(action)).parameters
    attributes = {name: getattr(action, name) for name in ATTRIBUTES if name in accepted}
    attributes = {name: value for name, value in attributes.items() if value is not None}
    if callable(action.type) and not action.choices:
        attributes["type"] = checked_text(action.type)
    attributes["help"] = (action.help or "") + " (shop-contract's --" + action.option_strings[-1][2:] + ")"
    return attributes


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("shop-contract", "contract suite of the shop service (shop-contract --help)")
    for action in cli_actions():
        group.addoption(shop_option(action), dest=shop_dest(action), action=type(action), **option_attributes(action))


def cli_arguments(config: pytest.Config) -> list[str]:
    """The `--shop-...` options given, as the CLI's arguments, so that both validate them the same way."""
    argv = ["--quiet"]
    for action in cli_actions():
        value = config.getoption(shop_dest(action))
        option = action.option_strings[-1]
        if value == action.default:
            continue
        if action.nargs == 0:  # A flag is given once, a count as many times as counted.
            argv += [option] * (value if isinstance(value, int) and not isinstance(value, bool) else 1)
        elif isinstance(value, list):
            for item in value:
                argv += [option, str(item)]
        else:
            argv += [option, str(value)]
    return argv


def pytest_configure(config: pytest.Config) -> None:
    if all(config.getoption(f"{PREFIX}_{dest}") is None for dest in TARGET_OPTIONS):
        return
    from contract_tests.run.arguments import options_from
    from contract_tests.run.pytest_suite import ContractSuite

    try:
        suite = ContractSuite(options_from(cli_arguments(config)))  # It reads --shop-baseline's file too.
    except (UsageError, SpecError) as exc:
        raise pytest.UsageError(f"shop-contract: {exc}") from None
    config.pluginmanager.register(suite, "shop-contract-suite")
