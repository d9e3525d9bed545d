"""The `Prefer` header (RFC 7240) of a request to the API. This is the one parser of every preference
the mock honours. Those are `code=NNN` and `example=NAME` for steering, and `delay=MS` for faults.

Steering and faults apply to the API's operations only. So they ask for the preferences of a request
to one of them only, and elsewhere the header is never read. The preferences are parsed once and kept
in the scope. No value reaches `int()` unbounded, because Python refuses more than 4,300 digits.
`code` must be the text of a status the operation declares. `delay`'s digits are counted before it
is converted, by `inputs.integer_fits`. A value that is not what its preference takes is a
`PreferenceError` naming the preference, a 400. A preference the mock does not know, such as
`return=minimal`, is ignored, as RFC 7240 asks.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from dataclasses import dataclass
from typing import Any

from mock_server.http.header_names import header_names
from mock_server.spec.inputs import integer_fits
from mock_server.spec.operations import Operation, describe
from mock_server.spec.quoting import quote

KEY = "shop_mock.prefer"  # The scope key of a request's preferences, or of the error they made.
PREFER = b"prefer"
MAX_DELAY_MS = 60_000  # The bound of `Prefer: delay` and of every fault rule's delay, drawn or fixed.


class PreferenceError(ValueError):
    """A preference whose value is not what it takes, a 400. `detail` names the preference."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


@dataclass(frozen=True)
class Preferences:
    code: int | None = None  # A status the operation declares.
    example: str | None = None  # The name of an example of the spec.
    delay_ms: int | None = None  # Whole milliseconds, at most MAX_DELAY_MS.

    def steer(self) -> bool:
        """Whether steering has anything to do."""
        return self.code is not None or self.example is not None


def sent(scope: MutableMapping[str, Any]) -> bool:
    """Whether the request carries a `Prefer` header. It is a look in `header_names`, shared by the layers."""
    return PREFER in header_names(scope)


def preferences(scope: MutableMapping[str, Any], operation: Operation) -> Preferences | None:
    """The preferences of a request to `operation`, or None without a `Prefer` header.

    It raises PreferenceError, every time it is asked, if one of them has a value it does not take.
    """
    if KEY not in scope:
        try:
            scope[KEY] = parse(scope["headers"], operation) if sent(scope) else None
        except PreferenceError as error:
            scope[KEY] = error
    found: Preferences | PreferenceError | None = scope[KEY]
    if isinstance(found, PreferenceError):
        raise found
    return found


def parse(headers: list[tuple[bytes, bytes]], operation: Operation) -> Preferences:
    """Every `Prefer` header's preferences, such as `code=404, example=bare; delay=10`.

    Of a preference given twice, the last counts.
    """
    values: dict[str, str] = {}
    for name, value in headers:
        if name.lower() == PREFER:
            for part in value.decode("latin-1").replace(";", ",").split(","):
                key, _, text = part.strip().partition("=")
                if key:
                    values[key.strip().lower()] = text.strip().strip('"')
    code, example, delay = values.get("code"), values.get("example"), values.get("delay")
    return Preferences(
        code=None if code is None else status(code, operation),
        example=example,
        delay_ms=None if delay is None else whole("delay", delay, 0, MAX_DELAY_MS, "whole milliseconds"),
    )


def status(text: str, operation: Operation) -> int:
    """`text` as a status `operation` declares. It is compared as text, and converted only once it is one."""
    declared = operation.declared()
    if text in {str(code) for code in declared}:
        return int(text)
    raise PreferenceError(
        f"Prefer: code {quote(text)} is not a status {operation.operation_id} declares ({describe(declared)})."
    )


def whole(name: str, text: str, low: int, high: int, what: str) -> int:
    """`text` as a whole number from `low` to `high`, its digits counted before it is converted."""
    bounds = {"type": "integer", "minimum": low, "maximum": high}
    if text.isascii() and text.isdecimal() and integer_fits(text, bounds) and low <= int(text) <= high:
        return int(text)
    raise PreferenceError(f"Prefer: {name} must be {what} from {low} to {high}, not {quote(text)}.")
