"""The spec, loaded once, and compiled validators for its schemas.

OpenAPI 3.0 schemas are not JSON Schema. `nullable` has to become a `null` type, and the formats the
spec relies on (`decimal`, `date`, `byte`) need checkers. Validators are compiled once with
jsonschema-rs, so that validating a request or a million fixture records stays cheap.
"""

from __future__ import annotations

import base64
import binascii
import datetime
import decimal
import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import jsonschema_rs

from shop_contract.document import SpecError, dereference, read

Schema = dict[str, Any]


@functools.cache
def load_spec(path: Path | None = None) -> Schema:
    """The spec at `path`, or the bundled one, as written with its `$ref`s. It is cached, so it is read-only."""
    return read(path)


def component_schema(name: str, spec: Schema | None = None) -> Schema:
    """A schema of `components.schemas`, dereferenced."""
    spec = spec or load_spec()
    schema: Schema = dereference(spec["components"]["schemas"][name], spec)
    return schema


# Connexion hands validators the operation's schema with the spec's `components` attached.
OPENAPI_ONLY = {"nullable", "example", "readOnly", "components"}


def server_path(server: Schema) -> str:
    """The path of a server URL such as `{base_url}/shop/api/v1`, variables left out."""
    url: str = server["url"].format(**{name: "" for name in server.get("variables", {})})
    return urlsplit(url).path.rstrip("/")


def mount_points(spec: Schema) -> tuple[str, str]:
    """The (backend, gateway) mount points.

    The backend is the spec's top-level server. The gateway is the other server of the gateway's paths.
    """
    try:
        backend = server_path(spec["servers"][0])
        gateways = [path for item in spec["paths"].values() for path in map(server_path, item.get("servers", []))]
    except (KeyError, IndexError, TypeError, AttributeError) as exc:
        raise SpecError(f"the spec has no usable servers and paths ({exc!r})") from exc
    gateway = next((path for path in gateways if path != backend), None)
    if gateway is None:
        raise SpecError("the spec names no gateway: no path item declares a server besides the backend's")
    return backend, gateway


def to_json_schema(schema: Schema) -> Schema:
    """Translate an OpenAPI 3.0 schema to JSON Schema Draft 4, where `nullable` becomes a `null` type."""
    converted = {key: value for key, value in schema.items() if key not in OPENAPI_ONLY}
    if "properties" in converted:
        converted["properties"] = {name: to_json_schema(sub) for name, sub in converted["properties"].items()}
    if "items" in converted:
        converted["items"] = to_json_schema(converted["items"])
    if schema.get("nullable") and "type" in converted:
        converted["type"] = [converted["type"], "null"]
    return converted


# Plain decimals, the form almost every value has. They are certainly valid, so they are checked without Decimal.
PLAIN_DECIMAL = re.compile(r"-?[0-9]+(?:\.[0-9]*)?|-?\.[0-9]+")


def is_decimal(value: str) -> bool:
    """`format: decimal`, a number with at least one digit. The documented pattern alone allows "." and ""."""
    if PLAIN_DECIMAL.fullmatch(value):  # The fast path, since a 10^6-product data set has 3 million of them.
        return True
    if not any(char.isdigit() for char in value):
        return False
    try:
        return decimal.Decimal(value).is_finite()
    except decimal.InvalidOperation:
        return False


def is_date(value: str) -> bool:
    try:
        datetime.date.fromisoformat(value)
    except ValueError:
        return False
    return len(value) == 10


def is_byte(value: str) -> bool:
    try:
        base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


FORMATS = {"decimal": is_decimal, "date": is_date, "byte": is_byte}


@dataclass(frozen=True)
class FieldError:
    """One rule a value broke, named by the field it concerns. The field is "" for the body as a whole."""

    field: str
    message: str


class SchemaValidator:
    """A compiled validator for one OpenAPI schema that reports errors by field."""

    def __init__(self, schema: Schema) -> None:
        self._validator = jsonschema_rs.Draft4Validator(to_json_schema(schema), formats=FORMATS, validate_formats=True)

    def errors(self, instance: Any) -> list[FieldError]:
        """Every rule `instance` breaks, found all at once. Each error costs tens of µs."""
        return [_field_error(error) for error in self._validator.iter_errors(instance)]

    def first_error(self, instance: Any) -> FieldError | None:
        """A rule `instance` breaks, or None if it breaks none, at the cost of a check that it is valid.

        It is for a value that may break millions of rules, such as a peer's body.
        """
        try:
            self._validator.validate(instance)
        except jsonschema_rs.ValidationError as error:
            return _field_error(error)
        return None


def _field_error(error: jsonschema_rs.ValidationError) -> FieldError:
    path = [str(part) for part in error.instance_path]
    if not path and isinstance(error.kind, jsonschema_rs.ValidationErrorKind.Required):
        path = [str(error.kind.property)]
    return FieldError(".".join(path), error.message)
