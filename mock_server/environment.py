"""Every `shop-mock` option from an environment variable, for containers and compose files.

One rule holds for all options. `--some-option` is read from `SHOP_MOCK_SOME_OPTION`: the prefix,
then the long name in capitals with `-` as `_`. A variable that is set and not empty gives the
option's default, so the command line still wins. Its value is converted and checked as the option's
would be:

- An option with a value (`SHOP_MOCK_PORT=9000`) is checked by the option's type and choices.
- A flag (`SHOP_MOCK_EMPTY=1`) takes `1`, `true`, `yes`, `on`, or `0`, `false`, `no`, `off`.
- A repeatable option (`SHOP_MOCK_API_KEY=key-a,key-b`) takes values separated by commas. The
  command line's values, if any, replace them all.

A bad value is one line that names the variable, and exit 2. So is a value that the command's own
checks refuse (`--port must be 0-65535`).

argparse keeps no public list of a parser's options. So its `_actions` and `_AppendAction` are read
here, and nowhere else.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Mapping, Sequence
from typing import Any, NoReturn

PREFIX = "SHOP_MOCK_"
TRUE, FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


def variable(option: str) -> str:
    """`--admin-token` -> `SHOP_MOCK_ADMIN_TOKEN`."""
    return PREFIX + option.removeprefix("--").upper().replace("-", "_")


class Parser(argparse.ArgumentParser):
    """argparse whose defaults may come from `SHOP_MOCK_*` variables, and whose errors then name the variable."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.from_environment: dict[str, tuple[str, str, object]] = {}  # Option to (dest, variable, value).
        self.parsed: argparse.Namespace | None = None

    def parse_with_environment(self, argv: Sequence[str] | None, environ: Mapping[str, str]) -> argparse.Namespace:
        """The options of `argv`, each one not given there taken from its variable when that is set."""
        for action in self._actions:
            long = [option for option in action.option_strings if option.startswith("--")]
            if not long or action.default == argparse.SUPPRESS:  # --help, --version
                continue
            name = variable(long[0])
            text = environ.get(name, "")
            if text:
                value = self.value_of(action, name, text)
                self.set_defaults(**{action.dest: value})
                self.from_environment[long[0]] = (action.dest, name, value)
        self.parsed = self.parse_args(argv)
        for dest, _, value in self.from_environment.values():
            given = getattr(self.parsed, dest)
            if isinstance(value, list) and given is not value:  # argparse added the command line's to them.
                setattr(self.parsed, dest, given[len(value) :])
        return self.parsed

    def value_of(self, action: argparse.Action, name: str, text: str) -> object:
        if action.nargs == 0:  # A flag.
            if text.lower() not in TRUE + FALSE:
                self.fail(f"{name}={text!r}: give one of {', '.join(TRUE + FALSE)}")
            return action.const if text.lower() in TRUE else action.default
        texts = [part.strip() for part in text.split(",")] if isinstance(action, argparse._AppendAction) else [text]
        values = [self.converted(action, name, part) for part in texts if part]
        return values if isinstance(action, argparse._AppendAction) else values[0]

    def converted(self, action: argparse.Action, name: str, text: str) -> object:
        convert: Any = action.type or str
        try:
            value = convert(text)
        except (TypeError, ValueError):
            self.fail(f"{name}={text!r}: not a valid {getattr(convert, '__name__', 'value')}")
        if action.choices is not None and value not in action.choices:
            self.fail(f"{name}={text!r}: choose from {', '.join(map(str, action.choices))}")
        return value

    def error(self, message: str) -> NoReturn:
        """A check on a value that came from a variable names the variable, on one line."""
        for option, (dest, name, value) in self.from_environment.items():
            mentioned = re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", message)
            if mentioned and self.parsed is not None and getattr(self.parsed, dest) is value:
                self.fail(f"{message} (from {name})")
        super().error(message)

    def fail(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")
