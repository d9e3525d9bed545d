"""Per-request work Connexion 3.3 repeats that a mock can do once, with the same checks.

A profile of the mock under load (see benchmarks/README.md) showed Connexion spending a large share
of every request on set-up that never changes between requests of one operation:

- the handler is wrapped in its parameter and response decorators anew on every request, which
  calls `inspect.signature` and builds a URI parser each time;
- the security handlers call `inspect.signature` on the credential check on every request;
- the parameter validator deep-copies each parameter's schema and compiles a jsonschema validator
  for it on every request.

Each class here keeps Connexion's behaviour and checks exactly (same validators, same format
checker, same error text) and only moves that set-up out of the request. They hook into private
parts of Connexion, which is why pyproject.toml keeps Connexion to the 3.3 series.
"""

from __future__ import annotations

import functools
import inspect
import logging
import typing as t

from connexion.apps.asynchronous import AsyncApi, AsyncASGIApp, AsyncOperation
from connexion.context import receive, scope
from connexion.decorators import StarletteDecorator
from connexion.decorators.parameter import pythonic, sanitized
from connexion.security import ApiKeySecurityHandler, BearerSecurityHandler
from connexion.utils import inspect_function_arguments, is_null, is_nullable
from connexion.validators import ParameterValidator
from jsonschema import Draft4Validator, ValidationError

Schema = dict[str, t.Any]
FORMAT_CHECKER = Draft4Validator.FORMAT_CHECKER  # the one Connexion's parameter validator uses


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

    Connexion passes a handler with `**kwargs` every query parameter of the request, and logs an ERROR
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

    Same Draft 4 validator and format checker as Connexion's, so the same values pass and the same
    error text comes back; only the per-request deep copy and compilation are gone (jsonschema does
    not modify the schema it validates against).
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
