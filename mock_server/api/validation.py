"""Request validators for Connexion: bodies compiled once per schema, bodies and parameters reporting errors by field.

They replace Connexion's own, which build a Python jsonschema validator per request. They fix what
a probe of Connexion 3.3 found. It did not check some formats (`decimal`, `date`, `byte`). It
answered 500 to bodies that are not UTF-8 or are too deeply nested, and to multipart without a
boundary.

Form bodies get the documented null rule before validation, as Django REST Framework parses a form.
The empty value sets a nullable field to null, and every other value is text. So `null`, `None`,
`true` and `0` are stored as sent in a string field, and a number field refuses them. The spec's
decisions `empty-form-value` and `form-text` state this rule.
"""

from __future__ import annotations

import json
import typing as t

import orjson
from starlette.datastructures import Headers, MutableHeaders, UploadFile
from starlette.formparsers import MultiPartException
from starlette.types import Message, Scope

from mock_server.api.connexion_seam import (
    CompiledParameterValidator,
    FormAdapter,
    JSONBodyAdapter,
    MediaTypeDict,
    MultiPartAdapter,
    Stream,
)
from mock_server.api.formparsers import StrictFormParser, StrictMultiPartParser
from mock_server.spec.errors import BadRequest
from mock_server.spec.inputs import MAX_JSON_DEPTH, load_json
from mock_server.spec.schemas import FieldError, Schema, SchemaValidator

FORM_NULL = ""
# A run of 19 digits is an integer that orjson may read as a float, where the standard parser keeps it
# an integer. It is found as 19 zeros once every digit is made a zero, because a regular expression
# took 3 us.
DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")
LONG_DIGITS = b"0" * 19
_compiled: dict[int, tuple[Schema, SchemaValidator]] = {}


def compiled(schema: Schema) -> SchemaValidator:
    """The validator of a schema object of the loaded spec. Both live as long as the app."""
    entry = _compiled.get(id(schema))
    if entry is None or entry[0] is not schema:
        entry = _compiled[id(schema)] = (schema, SchemaValidator(schema))
    return entry[1]


def one_per_field(errors: t.Iterable[FieldError]) -> list[FieldError]:
    """The first error of each field, so one mistake makes one error.

    A bad decimal breaks both the money pattern and `format: decimal`, and a client should read one
    message for it."""
    first: dict[str, FieldError] = {}
    for error in errors:
        first.setdefault(error.field, error)
    return list(first.values())


def bad_request(what: str, errors: list[FieldError]) -> BadRequest:
    detail = "; ".join(f"{e.field}: {e.message}" if e.field else e.message for e in errors)
    return BadRequest(f"{what}: {detail}", errors=errors)


def validate_body(schema: Schema, body: t.Any) -> None:
    errors = one_per_field(compiled(schema).errors(body))
    if errors:
        raise bad_request("Invalid request body", errors)


def parse_json(raw: bytes, encoding: str) -> t.Any:
    """A JSON body as the handler will get it, or None for an empty one.

    An unreadable body raises BadRequest. So do too deep a body and text that cannot be stored, as
    `inputs.load_json` says.

    A plain UTF-8 body (`plain_json`) is read by orjson, in a third of the standard parser's time on a
    product. orjson refuses all that the standard parser refuses. What orjson refuses goes on to the
    standard parser, whose verdict and message stand."""
    if not raw:
        return None
    if encoding == "utf-8" and plain_json(raw):
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            pass
    try:
        text = raw.decode(encoding)
    except (UnicodeDecodeError, LookupError):
        raise BadRequest(f"The request body is not valid {encoding}.") from None
    return load_json(text)


def plain_json(raw: bytes) -> bool:
    """Whether orjson reads `raw` as `load_json` reads its text, or refuses it.

    That holds when three things are true. There is no `\\u` escape, because orjson refuses a lone
    surrogate, which `load_json` refuses after parsing. There is no run of 19 digits, because orjson
    reads an integer past 64 bits as a float. And there are too few brackets for the depth check to
    refuse it, at most `MAX_JSON_DEPTH`."""
    return (
        b"\\u" not in raw
        and raw.count(b"[") + raw.count(b"{") <= MAX_JSON_DEPTH
        and LONG_DIGITS not in raw.translate(DIGITS_AS_ZERO)
    )


class JSONBodyValidator(JSONBodyAdapter):
    def parse(self, raw: bytes) -> t.Any:
        body = parse_json(raw, self.encoding)
        if raw and body is None:  # A JSON `null`, unlike an absent body, is a body of the wrong type.
            validate_body(self.schema, body)
        return body

    def check(self, body: t.Any) -> None:
        if body is None:
            if self.required:
                raise BadRequest("The request body must not be empty.")
            return  # A PATCH without a body changes nothing.
        validate_body(self.schema, body)


class FormBodyValidator(FormAdapter):
    """Parses a form body, applies the null rule, validates, and hands the handler the result.

    Connexion parses a form body a second time for the handler. There it would fail on an empty value
    for a nullable integer, and it would take the text `null` for null again. So the validated body is
    passed on as JSON, which Connexion hands the handler as it is.
    """

    MUTABLE_VALIDATION = True
    form_parser: type[StrictFormParser | StrictMultiPartParser] = StrictFormParser

    def reencode(self, body: t.Any, scope: Scope) -> tuple[Message, Scope]:
        encoded = json.dumps(body or {}).encode()
        new_scope = {**scope, "headers": list(scope["headers"])}
        headers = MutableHeaders(scope=new_scope)
        headers["content-type"] = "application/json"
        headers["content-length"] = str(len(encoded))
        return {"type": "http.request", "body": encoded, "more_body": False}, new_scope

    async def parse(self, stream: Stream, scope: Scope) -> t.Any:
        try:
            data = await self.form_parser(Headers(scope=scope), stream).parse()
        except (MultiPartException, UnicodeDecodeError, ValueError) as error:
            raise BadRequest(f"The form body cannot be parsed: {error}") from None
        properties = self.schema.get("properties", {})
        fields: dict[str, t.Any] = {}
        typed: dict[str, t.Any] = {}
        for name in data:
            values = data.getlist(name)
            if any(isinstance(value, UploadFile) for value in values):
                typed[name] = [""] * len(values)  # A file part for a text field, left to validation to refuse.
            elif properties.get(name, {}).get("nullable") and values[-1] == FORM_NULL:
                typed[name] = None
            else:
                fields[name] = values[-1:]  # In a repeated field the last value counts, as in DRF's QueryDict.
        return {**self.resolve_form(fields), **typed}

    def check(self, body: t.Any) -> None:
        validate_body(self.schema, body)


class MultiPartBodyValidator(FormBodyValidator, MultiPartAdapter):
    form_parser = StrictMultiPartParser


class ParameterValidator(CompiledParameterValidator):
    """Connexion's parameter checks, with the same validator and the same messages.

    Each offending query, path, header or cookie parameter is named in `errors`, as body fields are."""

    def validate_request(self, request: t.Any) -> None:
        errors = []
        for where in ("query", "path", "header", "cookie"):
            check = getattr(self, f"validate_{where}_parameter")
            for parameter in self.parameters.get(where, []):
                message = check(parameter, request)
                if message:
                    errors.append(FieldError(parameter["name"], message.split("\n")[0]))
        if errors:
            raise bad_request("Invalid parameters", errors)


def validator_map() -> dict[str, t.Any]:
    """The `validator_map` for `add_api`."""
    return {
        "parameter": ParameterValidator,
        "body": MediaTypeDict(
            {
                "*/*json": JSONBodyValidator,
                "application/x-www-form-urlencoded": FormBodyValidator,
                "multipart/form-data": MultiPartBodyValidator,
            }
        ),
    }
