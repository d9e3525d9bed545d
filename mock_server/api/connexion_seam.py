"""The one module touching Connexion's internals: every subclass, replacement and private name.

Connexion 3.3 repeats, on every request, set-up that never changes between requests of one
operation (a profile under load, benchmarks/benchmark-history.md, "Where the time goes"). It wraps
the handler in its decorators anew, which calls `inspect.signature` and builds a URI parser. Its
security handlers inspect the credential check. Its parameter validator deep-copies and compiles
each parameter's schema. The classes here keep Connexion's checks exactly, and move that set-up out
of the request.

The mock's own validators and URI parser (api.validation, api.addressing) subclass the adapters
here, which give Connexion's private hooks and fields public names. Nothing else reaches past
Connexion's public surface (tests/project/test_architecture.py). tests/mock_server/api/test_connexion_seam.py
pins every name below, so a Connexion release that renames or changes one fails there first. This
is why pyproject.toml keeps Connexion to the 3.3 series.

Long because it is the one module holding Connexion's internals, so that one test module pins them
all (tests/project/test_architecture.py holds every other module to Connexion's public surface). Split, the
rule would name several modules, and each would pin its own part.

Private names relied on (underscored):
- `AsyncApp._middleware_app` is the innermost app, replaced by `DecoratedOnceASGIApp`.
- `AsyncOperation._fn` is the operation's resolved handler.
- `AbstractSecurityHandler._accepts_kwarg(func, keyword)` is replaced by a cached one.
- `OpenAPISpecification._validate_spec(spec)` is wrapped to validate each document once.
- `AbstractRequestBodyValidator._schema`, `._required`, `._encoding`, `._parse(stream, scope)`,
  `._validate(body)`, `._insert_body(receive, *, body, scope)` and `._insert_messages(receive, *, messages)`.
- `FormDataValidator._uri_parser`.
- `OpenAPIURIParser._body_schema`.

Internal modules and names relied on (not underscored, but not Connexion's documented surface):
- `connexion.apps.asynchronous`: `AsyncApi.make_operation`, `AsyncASGIApp.api_cls`,
  `AsyncOperation.from_operation`, `.fn`, `.pythonic_params` and `.jsonifier`.
- `connexion.decorators`: `StarletteDecorator.decorate`, `.uri_parser`, `.framework.get_request`,
  `decorators.parameter.pythonic` and `sanitized`.
- `connexion.security`: `ApiKeySecurityHandler` and `BearerSecurityHandler`.
- `connexion.utils`: `inspect_function_arguments`, `is_null` and `is_nullable`.
- `connexion.validators`: `ParameterValidator.validate_parameter`, `.parameters`,
  `FormDataValidator`, `MultiPartFormDataValidator` and `JSONRequestBodyValidator`.
- `connexion.uri_parsing.OpenAPIURIParser`: `resolve_params`, `resolve_form` and `param_schemas`.
- `connexion.datastructures.MediaTypeDict` and `connexion.spec.OpenAPISpecification`.
- `connexion.spec.Specification.load(spec, *, arguments)`, wrapped to build each document's
  specification once, and its `base_path` setter, the one change Connexion makes to a built one.
- `AsyncApp.middleware` is the `ConnexionMiddleware`. Its `__call__` sets `scope["app"]`, and its
  `middleware_stack` holds the layers its first `__call__` builds.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
import logging
import threading
import typing as t

from connexion import AsyncApp
from connexion.apps.asynchronous import AsyncApi, AsyncASGIApp, AsyncOperation
from connexion.context import receive, scope
from connexion.datastructures import MediaTypeDict
from connexion.decorators import StarletteDecorator
from connexion.decorators.parameter import pythonic, sanitized
from connexion.exceptions import TypeValidationError
from connexion.security import ApiKeySecurityHandler, BearerSecurityHandler
from connexion.spec import OpenAPISpecification, Specification
from connexion.uri_parsing import OpenAPIURIParser
from connexion.utils import inspect_function_arguments, is_null, is_nullable
from connexion.validators import (
    FormDataValidator,
    JSONRequestBodyValidator,
    MultiPartFormDataValidator,
    ParameterValidator,
)
from jsonschema import Draft4Validator, ValidationError
from starlette.types import ASGIApp, Message, Receive, Scope

__all__ = ["MediaTypeDict"]  # the validator map's type, re-exported for api.validation

Schema = dict[str, t.Any]
FORMAT_CHECKER = Draft4Validator.FORMAT_CHECKER  # the one Connexion's parameter validator uses
Stream = t.AsyncGenerator[bytes, None]


class DecorateOnce(StarletteDecorator):  # type: ignore[misc]
    """Wraps a handler in Connexion's parameter and response decorators once, not per request.

    The wrapped handler reads the request from Connexion's context at call time, as before; the URI
    parser depends only on the operation, which is the same for every call of one handler.
    """

    def __call__(self, function: t.Callable[..., t.Any]) -> t.Callable[..., t.Any]:
        decorated = self.decorate(function)
        parsers: list[t.Any] = []

        @functools.wraps(function)
        async def wrapper(*args: t.Any, **kwargs: t.Any) -> t.Any:
            if not parsers:
                parsers.append(self.uri_parser)
            request = self.framework.get_request(uri_parser=parsers[0], scope=scope, receive=receive)
            return await decorated(request)

        return wrapper


class DecoratedOnceOperation(AsyncOperation):  # type: ignore[misc]
    arguments: tuple[str, ...] = ()
    """The handler's arguments as Connexion names them: the operation's parameters and its body."""

    @classmethod
    def from_operation(cls, operation: t.Any, *, pythonic_params: bool, jsonifier: t.Any) -> DecoratedOnceOperation:
        built: DecoratedOnceOperation = super().from_operation(
            operation, pythonic_params=pythonic_params, jsonifier=jsonifier
        )
        names = [param["name"] for param in operation.parameters]
        if operation.request_body:
            names.append(operation.body_name(None))
        sanitize = pythonic if pythonic_params else sanitized
        built.arguments = tuple(dict.fromkeys(sanitize(name) for name in names))
        return built

    @functools.cached_property
    def fn(self) -> t.Callable[..., t.Any]:
        handler = declared_arguments_only(self._fn, self.arguments)
        return DecorateOnce(pythonic_params=self.pythonic_params, jsonifier=self.jsonifier)(handler)


def declared_arguments_only(handler: t.Callable[..., t.Any], names: t.Iterable[str]) -> t.Callable[..., t.Any]:
    """`handler` (which takes `**params`), shown to Connexion as taking exactly the operation's arguments.

    Connexion passes a handler with `**kwargs` every query parameter of the request. It logs an ERROR
    ("Function argument ... not defined in specification") for each one the spec does not declare,
    although the contract says unknown query parameters are ignored. With the declared arguments
    only, Connexion leaves the unknown ones out, at debug level, which is what they are.
    """

    async def call(**kwargs: t.Any) -> t.Any:
        return await handler(**kwargs)

    call.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY) for name in names]
    )
    call.__name__ = call.__qualname__ = getattr(handler, "__name__", "handler")
    return call


class DecoratedOnceApi(AsyncApi):  # type: ignore[misc]
    def make_operation(self, op: t.Any) -> AsyncOperation:
        return DecoratedOnceOperation.from_operation(op, pythonic_params=self.pythonic_params, jsonifier=self.jsonifier)


class DecoratedOnceASGIApp(AsyncASGIApp):  # type: ignore[misc]
    """The innermost Connexion app, building `DecoratedOnceOperation`s."""

    api_cls = DecoratedOnceApi


class InspectOnce:
    """Mixin for Connexion security handlers: inspect the credential check's signature once."""

    @staticmethod
    @functools.cache
    def _accepts_kwarg(func: t.Callable[..., t.Any], keyword: str) -> bool:
        arguments, has_kwargs = inspect_function_arguments(func)
        return bool(has_kwargs or keyword in arguments)


class ApiKeyHandler(InspectOnce, ApiKeySecurityHandler):  # type: ignore[misc]
    pass


class BearerHandler(InspectOnce, BearerSecurityHandler):  # type: ignore[misc]
    pass


class CompiledParameterValidator(ParameterValidator):  # type: ignore[misc]
    """Connexion's parameter validator, with each parameter's validator compiled once.

    It uses the same Draft 4 validator and format checker as Connexion's, so the same values pass and
    the same error text comes back. Only the per-request deep copy and compilation are gone. The copy
    was not needed, because jsonschema does not modify the schema it validates against.
    """

    _validators: t.ClassVar[dict[int, tuple[Schema, t.Any]]] = {}

    @classmethod
    def _validator_of(cls, param: Schema) -> t.Any:
        entry = cls._validators.get(id(param))
        if entry is None or entry[0] is not param:
            schema = param.get("schema", param)
            entry = cls._validators[id(param)] = (param, Draft4Validator(schema, format_checker=FORMAT_CHECKER))
        return entry[1]

    @classmethod
    def validate_parameter(
        cls, parameter_type: str, value: t.Any, param: Schema, param_name: str | None = None
    ) -> str | None:
        if is_nullable(param) and is_null(value):
            return None
        if value is not None:
            try:
                cls._validator_of(param).validate(value)
            except ValidationError as exception:
                return str(exception)
            return None
        if param.get("required"):
            return f"Missing {parameter_type} parameter '{param['name']}'"
        return None


def quiet_content_type_note() -> None:
    """Silence Connexion's per-request "this operation accepts multiple content types" warning.

    Connexion logs it on every request to an operation whose body has several media types, although
    it then validates the body by the request's own Content-Type. Its logger logs nothing else above
    debug, so raising the logger's level is the cheap way out: a filter would still pay for building
    each record, which cost an eighth of a POST.
    """
    logging.getLogger("connexion.operations.openapi3").setLevel(logging.ERROR)  # sic: connexion names it so


def decorate_handlers_once(app: AsyncApp) -> None:
    """Make `app`'s innermost app build `DecoratedOnceOperation`s.

    Call it before any API is added, so that swapping the innermost app loses nothing."""
    app._middleware_app = app.middleware.app = DecoratedOnceASGIApp()


def enter_as_connexion(app: AsyncApp, scope: Scope) -> None:
    """Do to the scope of a request that skips Connexion's middleware entry what that entry does.

    The entry sets its own instance as `scope["app"]`. Then Starlette's router raises to Connexion's
    error handlers, rather than answering a 404 or 405 itself."""
    scope["app"] = app.middleware


def built_layers(app: AsyncApp) -> list[ASGIApp] | None:
    """The layers Connexion built, outermost first, or None before the app's first call.

    They are Connexion's own, each middleware added, and its innermost app. Connexion builds them on
    the first call, not as they are added."""
    built: list[ASGIApp] | None = app.middleware.middleware_stack
    return None if built is None else list(built)


_valid: set[bytes] = set()
_lock = threading.Lock()


def digest(document: t.Any) -> bytes:
    return hashlib.sha256(json.dumps(document, sort_keys=True, default=str).encode()).digest()


def validate_each_document_once() -> None:
    """Have Connexion validate each spec document once per process, not once per API it builds.

    Connexion validates the whole document in every `Specification` it makes. That is twice per mock,
    for the backend and the gateway surfaces, and again per test app. The memo remembers the documents
    that passed by a digest of their content, and installing it twice changes nothing. A document that
    fails fails every time, with Connexion's own error."""
    if getattr(OpenAPISpecification._validate_spec, "memoised", False):
        return
    validate = OpenAPISpecification._validate_spec

    def validate_once(cls: type[OpenAPISpecification], spec: t.Any) -> None:
        key = digest(spec)
        with _lock:
            if key in _valid:
                return
        validate.__func__(cls, spec)
        with _lock:
            _valid.add(key)

    validate_once.memoised = True  # type: ignore[attr-defined]
    OpenAPISpecification._validate_spec = classmethod(validate_once)


_built: dict[int, tuple[t.Any, Specification]] = {}


def build_each_document_once() -> None:
    """Have Connexion build one `Specification` per spec document per process, which every mock of it shares.

    Building one deep-copies the document and resolves each `$ref`: 12 ms of a fresh mock's 31, and the
    tests build hundreds. Connexion changes a built specification only to set its base path, and every
    mock of one document sets the same one, its surface's mount point (`surfaces.Surfaces`). A document
    is known by its identity, its entry holding it so that the `id` stays its own: the mock's documents
    are cached and read-only (`spec.schemas.load_spec`, `surfaces.Surfaces.of`). Installing it twice
    changes nothing."""
    if getattr(Specification.load, "memoised", False):
        return
    load = Specification.load

    def load_once(cls: type[Specification], spec: t.Any, *, arguments: t.Any = None) -> Specification:
        if not isinstance(spec, dict) or arguments:
            return load.__func__(cls, spec, arguments=arguments)
        with _lock:
            kept = _built.get(id(spec))
        if kept is not None and kept[0] is spec:
            return kept[1]
        built = load.__func__(cls, spec, arguments=arguments)
        with _lock:
            _built[id(spec)] = (spec, built)
        return built

    load_once.memoised = True  # type: ignore[attr-defined]
    Specification.load = classmethod(load_once)


class BodyFields:
    """A body validator's fields, as Connexion's `AbstractRequestBodyValidator.__init__` keeps them."""

    _schema: Schema
    _required: bool
    _encoding: str

    @property
    def schema(self) -> Schema:
        return self._schema

    @property
    def required(self) -> bool:
        return bool(self._required)

    @property
    def encoding(self) -> str:
        return self._encoding


class JSONBodyAdapter(BodyFields, JSONRequestBodyValidator):  # type: ignore[misc]
    """Connexion's JSON body validator: a subclass defines `parse(raw)` and `check(body)`."""

    async def _parse(self, stream: Stream, scope: Scope) -> t.Any:
        return self.parse(b"".join([message async for message in stream]))

    def _validate(self, body: t.Any) -> None:
        self.check(body)

    def parse(self, raw: bytes) -> t.Any:
        raise NotImplementedError

    def check(self, body: t.Any) -> None:
        raise NotImplementedError


class FormAdapter(BodyFields, FormDataValidator):  # type: ignore[misc]
    """Connexion's form validator: a subclass defines `parse(stream, scope)`, `check(body)` and
    `reencode(body, scope)` (the message and scope the handler's side of Connexion reads instead)."""

    async def _parse(self, stream: Stream, scope: Scope) -> t.Any:
        return await self.parse(stream, scope)

    def _validate(self, body: t.Any) -> None:
        self.check(body)

    def _insert_body(self, receive: Receive, *, body: t.Any, scope: Scope) -> tuple[Receive, Scope]:
        message, new_scope = self.reencode(body, scope)
        return self._insert_messages(receive, messages=[message]), new_scope

    def resolve_form(self, fields: dict[str, list[str]]) -> dict[str, t.Any]:
        """The form's fields, typed by the operation's URI parser as Connexion's own parse types them.

        One thing differs. Where Connexion takes "null" or "None" for null (`is_null`), or fails on a
        number's text without naming the field, the text stays text. A form's null is the empty value
        alone (decision `form-text`). Validation then judges the text by the field's schema, and names
        the field it refuses."""
        resolved: dict[str, t.Any] = {}
        for name, values in fields.items():
            try:
                typed = self._uri_parser.resolve_form({name: values})[name]
            except TypeValidationError:
                typed = None
            resolved[name] = values[-1] if typed is None else typed
        return resolved

    async def parse(self, stream: Stream, scope: Scope) -> t.Any:
        raise NotImplementedError

    def check(self, body: t.Any) -> None:
        raise NotImplementedError

    def reencode(self, body: t.Any, scope: Scope) -> tuple[Message, Scope]:
        raise NotImplementedError


class MultiPartAdapter(FormAdapter, MultiPartFormDataValidator):  # type: ignore[misc]
    """The same for multipart/form-data."""


class URIParserAdapter(OpenAPIURIParser):  # type: ignore[misc]
    """Connexion's OpenAPI 3 parameter and form parser, with the operation's body schema public."""

    @property
    def body_schema(self) -> Schema | None:
        schema: Schema | None = self._body_schema
        return schema
