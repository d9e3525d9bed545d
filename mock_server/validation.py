"""Request-body validators for Connexion, compiled once per schema and reporting errors by field.

They replace Connexion's own (which build a Python jsonschema validator per request) to fix what a
probe of Connexion 3.3 found: formats it does not check (`decimal`, `date`, `byte`), 500s on bodies
that are not UTF-8 or too deeply nested, and multipart without a boundary. Form bodies get the
documented null rule before validation: an empty value (or the text `null`, which is how multipart
clients spell None) sets a nullable field to null.
"""

from __future__ import annotations

import json
import typing as t

from connexion.datastructures import MediaTypeDict
from connexion.validators import FormDataValidator, JSONRequestBodyValidator, MultiPartFormDataValidator
from starlette.formparsers import MultiPartException
from starlette.types import Scope

from mock_server.errors import BadRequest
from mock_server.schemas import Schema, SchemaValidator

FORM_NULLS = ("", "null")
_compiled: dict[int, tuple[Schema, SchemaValidator]] = {}


def compiled(schema: Schema) -> SchemaValidator:
    """The validator of a schema object of the loaded spec (they live as long as the app)."""
    entry = _compiled.get(id(schema))
    if entry is None or entry[0] is not schema:
        entry = _compiled[id(schema)] = (schema, SchemaValidator(schema))
    return entry[1]


def validate_body(schema: Schema, body: t.Any) -> None:
    errors = compiled(schema).errors(body)
    if errors:
        detail = "; ".join(f"{e.field}: {e.message}" if e.field else e.message for e in errors)
        raise BadRequest(f"Invalid request body: {detail}", errors=errors)


def nulls_from_form(schema: Schema, body: dict[str, t.Any]) -> dict[str, t.Any]:
    """Apply the form null rule: a nullable field sent empty (or as `null`) is None."""
    properties = schema.get("properties", {})
    return {
        name: None if value in FORM_NULLS and properties.get(name, {}).get("nullable") else value
        for name, value in body.items()
    }


class JSONBodyValidator(JSONRequestBodyValidator):  # type: ignore[misc]
    async def _parse(self, stream: t.AsyncGenerator[bytes, None], scope: Scope) -> t.Any:
        raw = b"".join([message async for message in stream])
        if not raw:
            return None
        try:
            return json.loads(raw.decode(self._encoding))
        except UnicodeDecodeError:
            raise BadRequest(f"The request body is not valid {self._encoding}.") from None
        except RecursionError:
            raise BadRequest("The request body is nested too deeply.") from None
        except ValueError as error:  # JSONDecodeError, and integers too long to convert
            raise BadRequest(f"The request body is not valid JSON: {error}") from None

    def _validate(self, body: t.Any) -> None:
        if body is None:
            raise BadRequest("The request body must not be empty.")
        validate_body(self._schema, body)


class FormBodyValidator(FormDataValidator):  # type: ignore[misc]
    async def _parse(self, stream: t.AsyncGenerator[bytes, None], scope: Scope) -> t.Any:
        try:
            body = await super()._parse(stream, scope)
        except (MultiPartException, UnicodeDecodeError, ValueError) as error:
            raise BadRequest(f"The form body cannot be parsed: {error}") from None
        return nulls_from_form(self._schema, body)

    def _validate(self, body: t.Any) -> None:
        validate_body(self._schema, body)


class MultiPartBodyValidator(FormBodyValidator, MultiPartFormDataValidator):  # type: ignore[misc]
    pass


def validator_map() -> dict[str, t.Any]:
    """The `validator_map` for `add_api`."""
    return {
        "body": MediaTypeDict(
            {
                "*/*json": JSONBodyValidator,
                "application/x-www-form-urlencoded": FormBodyValidator,
                "multipart/form-data": MultiPartBodyValidator,
            }
        )
    }
