"""The `Prefer` header (RFC 7240) of a request to the API: the one parser of every preference the mock
honours, `code=NNN` and `example=NAME` (steering) and `delay=MS` (faults).

Steering and faults apply to the API's operations only, so they ask for the preferences of a
request to one of them only (elsewhere the header is never read), parsed once and kept in the
scope. No value reaches `int()` unbounded (Python refuses more than 4,300 digits): `code` must be
the text of a status the operation declares, and `delay`'s digits are counted before it is
converted (`inputs.integer_fits`). A value that is not what its preference takes is a
`PreferenceError` naming the preference (400); a preference the mock does not know
(`return=minimal`) is ignored, as RFC 7240 asks.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from dataclasses import dataclass
from typing import Any

from mock_server.http.header_names import header_names
from mock_server.spec.inputs import integer_fits
from mock_server.spec.operations import Operation, describe
from mock_server.spec.quoting import quote

KEY = "shop_mock.prefer"  # the scope key of a request's preferences (or of the error they made)
PREFER = b"prefer"
MAX_DELAY_MS = 60_000  # for `Prefer: delay` and every fault rule's delay, drawn or fixed


class PreferenceError(ValueError):
    """A preference whose value is not what it takes (400); `detail` names the preference."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


@dataclass(frozen=True)
class Preferences:
    code: int | None = None  # a status the operation declares
    example: str | None = None  # the name of an example of the spec
    delay_ms: int | None = None  # whole milliseconds, at most MAX_DELAY_MS

    def steer(self) -> bool:
        """Whether steering has anything to do."""
        return self.code is not None or self.example is not None


def sent(scope: MutableMapping[str, Any]) -> bool:
    """Whether the request carries a `Prefer` header (a look in `header_names`, shared by the layers)."""
    return PREFER in header_names(scope)


def preferences(scope: MutableMapping[str, Any], operation: Operation) -> Preferences | None:
    """The preferences of a request to `operation`, or None without a `Prefer` header;
    PreferenceError (every time it is asked) if one of them has a value it does not take."""
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
    """Every `Prefer` header's preferences (`code=404, example=bare; delay=10`); of a preference given
    twice, the last counts."""
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
    """`text` as a status `operation` declares: compared as text, converted only once it is one."""
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
