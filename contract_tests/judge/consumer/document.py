"""A consumer contract file read back. It is input like any other, so it is bounded and schema-valid before use.

`load` reuses `findings_file.load`. That counts the size, nesting and item bounds before parsing,
requires Unicode text, then validates against the shipped `consumer_contract.schema.json`. Every
refusal is one `ConsumerError` line naming the file and the field.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contract_tests.outcome import findings_file
from contract_tests.outcome.findings import InteractionVerdict

SCHEMA_NAME = "consumer_contract.schema.json"
FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")


class ConsumerError(Exception):
    """The consumer contract cannot be used. It is unreadable, too large, or not valid against its schema."""


@dataclass(frozen=True)
class Interaction:
    """One recorded request shape of an operation, with its example and what the mock answered."""

    raw: dict[str, Any]

    @property
    def name(self) -> str:
        return str(self.raw["name"])

    @property
    def surface(self) -> str:
        return str(self.raw["surface"])

    @property
    def operation(self) -> str:
        return str(self.raw["operation"])

    @property
    def request(self) -> dict[str, Any]:
        shape: dict[str, Any] = self.raw["request"]
        return shape

    @property
    def example(self) -> dict[str, Any]:
        example: dict[str, Any] = self.raw["example"]
        return example

    @property
    def media_type(self) -> str | None:
        media_type: str | None = self.request["media_type"]
        return media_type

    def fields_received(self, status: int) -> list[str]:
        answer = self.raw["responses"].get(str(status))
        return list(answer["fields"]) if answer else []

    @property
    def recorded_status(self) -> int:
        """What the mock answered the recorded example."""
        return int(self.example["status"])

    def judged(self, status: int | None, verdict: str, problems: tuple[str, ...] = ()) -> InteractionVerdict:
        """This interaction as judged. `verdict` is "ok", "broken" or "not exercised".

        `status` is the target's answer. It is None when the interaction was read against a spec, or not
        replayed."""
        return InteractionVerdict(
            self.name, self.surface, self.operation, self.summary(), self.recorded_status, status, verdict, problems
        )

    def summary(self) -> str:
        """The shape in a few words, as `METHOD path?query media {fields} as auth`."""
        request = self.request
        query = "?" + "&".join(request["query_parameters"]) if request["query_parameters"] else ""
        empty = set(request["empty_fields"])
        fields = ", ".join(f"{name}=''" if name in empty else name for name in request["body_fields"])
        body = f" {request['media_type']}" + (f" {{{fields}}}" if fields else "") if request["media_type"] else ""
        auth = " + ".join(request["auth"]) or "no credentials"
        return f"{self.raw['method']} {self.raw['path']}{query}{body} as {auth}"


@dataclass(frozen=True)
class Contract:
    path: Path
    raw: dict[str, Any]

    @property
    def consumer(self) -> str:
        return str(self.raw["consumer"])

    @property
    def spec_digest(self) -> str:
        return str(self.raw["spec"]["digest"])

    @property
    def recorded_spec(self) -> str:
        return f"{self.raw['spec']['version']} {self.spec_digest}"

    @property
    def interactions(self) -> list[Interaction]:
        return [Interaction(raw) for raw in self.raw["interactions"]]


def load(path: Path) -> Contract:
    """The contract in `path`. ConsumerError, one line, when it cannot be used."""
    try:
        return Contract(path, findings_file.load(path, SCHEMA_NAME))
    except OSError as exc:
        raise ConsumerError(f"cannot read the consumer contract {path}: {exc.strerror or exc}") from None
    except findings_file.FindingsError as exc:
        raise ConsumerError(f"not a usable consumer contract: {exc}") from None


def field_paths(value: Any, prefix: str = "") -> set[str]:
    """The field names in a JSON value as the mock records them. Nested ones are dotted, a list's items `name[]`."""
    found: set[str] = set()
    if isinstance(value, dict):
        for key, item in value.items():
            path = f"{prefix}.{key}" if prefix else str(key)
            found.add(path)
            found |= field_paths(item, path)
    elif isinstance(value, list):
        for item in value:
            found |= field_paths(item, f"{prefix}[]")
    return found


def empty_lists(value: Any, prefix: str = "") -> set[str]:
    """The paths of the empty lists in a JSON value, as `field_paths` names them. Nothing under them can show."""
    found: set[str] = set()
    if isinstance(value, dict):
        for key, item in value.items():
            found |= empty_lists(item, f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(value, list):
        if not value:
            found.add(f"{prefix}[]")
        for item in value:
            found |= empty_lists(item, f"{prefix}[]")
    return found
