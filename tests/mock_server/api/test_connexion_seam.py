"""Every Connexion internal that api/connexion_seam.py relies on, pinned: each name still exists with
the parameters the seam calls it with, each private field is still set where the seam reads it, and
the replacements still answer as Connexion's own. A Connexion release that renames or changes one
fails here, before the mock misbehaves."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from connexion import AsyncApp
from connexion.apps.asynchronous import AsyncApi, AsyncASGIApp, AsyncOperation
from connexion.decorators import StarletteDecorator
from connexion.exceptions import TypeValidationError
from connexion.frameworks.starlette import Starlette
from connexion.middleware import MiddlewarePosition
from connexion.middleware.abstract import AbstractSpecAPI
from connexion.middleware.main import ConnexionMiddleware
from connexion.security import AbstractSecurityHandler
from connexion.spec import OpenAPISpecification, Specification
from connexion.uri_parsing import OpenAPIURIParser
from connexion.utils import inspect_function_arguments, is_null, is_nullable
from connexion.validators import FormDataValidator, JSONRequestBodyValidator, ParameterValidator
from connexion.validators.abstract import AbstractRequestBodyValidator
from starlette.testclient import TestClient

from mock_server.api import connexion_seam
from mock_server.api.connexion_seam import (
    CompiledParameterValidator,
    DecoratedOnceASGIApp,
    FormAdapter,
    InspectOnce,
    JSONBodyAdapter,
    URIParserAdapter,
    built_layers,
    decorate_handlers_once,
    enter_as_connexion,
)
from mock_server.app import create_app
from mock_server.settings import DEFAULT_API_KEY, Settings
from mock_server.spec.schemas import load_spec
from tests.support.live import running

# callable -> its parameters as (name, kind), as the seam calls or overrides it
SIGNATURES: list[tuple[Callable[..., Any], list[str]]] = [
    (AsyncApi.make_operation, ["self", "operation"]),
    (AsyncOperation.from_operation, ["operation", "*pythonic_params", "*jsonifier"]),
    (AsyncOperation.__init__, ["self", "fn", "jsonifier", "operation_id", "pythonic_params"]),
    (StarletteDecorator.decorate, ["self", "function"]),
    (StarletteDecorator.__init__, ["self", "*pythonic_params", "*uri_parser_class", "*jsonifier"]),
    (Starlette.get_request, ["*scope", "*receive", "*uri_parser", "**kwargs"]),
    (AbstractSecurityHandler._accepts_kwarg, ["func", "keyword"]),
    (OpenAPISpecification._validate_spec, ["spec"]),
    (Specification.load, ["spec", "*arguments"]),
    (ParameterValidator.validate_parameter, ["parameter_type", "value", "param", "param_name"]),
    (AbstractRequestBodyValidator._parse, ["self", "stream", "scope"]),
    (AbstractRequestBodyValidator._validate, ["self", "body"]),
    (AbstractRequestBodyValidator._insert_body, ["self", "receive", "*body", "*scope"]),
    (AbstractRequestBodyValidator._insert_messages, ["receive", "*messages"]),
    (OpenAPIURIParser.resolve_params, ["self", "params", "_in"]),
    (OpenAPIURIParser.resolve_form, ["self", "form_data"]),
    (inspect_function_arguments, ["function"]),
    (is_null, ["value"]),
    (is_nullable, ["param_def"]),
]
# class -> private fields the seam reads, set by Connexion's own constructor
FIELDS = {
    AbstractRequestBodyValidator: ["_schema", "_required", "_encoding"],
    FormDataValidator: ["_uri_parser"],
    OpenAPIURIParser: ["_body_schema"],
    AsyncOperation: ["_fn"],
}
PRIVATE_PINNED = {"_middleware_app", "_accepts_kwarg", "_validate_spec", "_parse", "_validate", "_insert_body"}
SEAM_OWN = {"_validators", "_validator_of"}  # CompiledParameterValidator's own cache, not Connexion's
PRIVATE_PINNED |= {"_insert_messages"} | {name for names in FIELDS.values() for name in names}


def parameters(function: Callable[..., Any]) -> list[str]:
    marks = {inspect.Parameter.KEYWORD_ONLY: "*", inspect.Parameter.VAR_KEYWORD: "**"}
    return [marks.get(p.kind, "") + p.name for p in inspect.signature(function).parameters.values()]


@pytest.mark.parametrize(("function", "expected"), SIGNATURES, ids=lambda item: getattr(item, "__qualname__", ""))
def test_each_internal_keeps_its_parameters(function: Callable[..., Any], expected: list[str]) -> None:
    assert parameters(function) == expected


@pytest.mark.parametrize(("cls", "names"), FIELDS.items(), ids=lambda item: getattr(item, "__name__", ""))
def test_each_private_field_is_set_by_connexion(cls: type, names: list[str]) -> None:
    source = "".join(inspect.getsource(klass.__init__) for klass in cls.__mro__[:-1] if "__init__" in vars(klass))
    assert [name for name in names if f"self.{name} =" not in source] == []


def test_the_seam_names_every_private_name_it_uses_and_each_is_pinned() -> None:
    source = inspect.getsource(connexion_seam)
    docstring = connexion_seam.__doc__ or ""
    used = set(re.findall(r"\.(_[a-z][a-z_]*)\b", source.replace(docstring, ""))) - SEAM_OWN
    assert used <= PRIVATE_PINNED, f"pin these here and list them in the seam's docstring: {used - PRIVATE_PINNED}"
    assert [name for name in PRIVATE_PINNED if f"{name}" not in docstring] == []


def test_the_innermost_app_is_where_the_seam_replaces_it() -> None:
    app = AsyncApp(__name__)
    assert isinstance(app._middleware_app, AsyncASGIApp)
    assert app.middleware.app is app._middleware_app
    decorate_handlers_once(app)
    assert isinstance(app._middleware_app, DecoratedOnceASGIApp)
    assert app.middleware.app is app._middleware_app


def test_connexion_enters_a_request_as_the_seam_does_for_a_bypassed_one() -> None:
    app = AsyncApp(__name__)
    assert isinstance(app.middleware, ConnexionMiddleware)
    assert 'scope["app"] = self' in inspect.getsource(ConnexionMiddleware.__call__)
    scope: dict[str, Any] = {}
    enter_as_connexion(app, scope)
    assert scope["app"] is app.middleware


class Passing:
    """A middleware that only passes requests on."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self.app(scope, receive, send)


def test_connexion_builds_its_layers_on_the_first_call_where_the_seam_finds_them() -> None:
    app = AsyncApp(__name__)
    app.add_middleware(Passing, position=MiddlewarePosition.BEFORE_EXCEPTION)
    assert built_layers(app) is None
    with running(app) as origin:
        assert httpx.get(f"{origin}/nowhere", timeout=30).status_code == 404
    layers = built_layers(app)
    assert layers is not None
    assert [type(layer) for layer in layers].count(Passing) == 1
    assert (layers[0], layers[-1]) == (app.middleware.app, app._middleware_app)  # outermost first


def test_mocks_of_one_spec_share_connexions_specification_of_each_surface_and_each_serves_both() -> None:
    """Connexion builds a document's specification once (`build_each_document_once`), and every mock of it
    sets the same base path on it, its surface's mount point: the one change Connexion makes to it."""
    source = inspect.getsource(ConnexionMiddleware.add_api)
    assert "Specification.load(specification, arguments=arguments)" in source
    assert "self.specification.base_path = base_path" in inspect.getsource(AbstractSpecAPI._set_base_path)
    first, second = create_app(Settings()), create_app(Settings())
    specifications = [[api.specification for api in app.middleware.apis] for app in (first, second)]
    assert len(specifications[0]) == 2 and all(a is b for a, b in zip(*specifications, strict=True))
    for app in (first, second):  # each builds its layers at its first request, each setting the base paths
        client = TestClient(app, headers={"X-API-Key": DEFAULT_API_KEY})
        assert client.get(f"{app.backend_prefix}/productlines/").status_code == 200
        assert client.get(f"{app.gateway_prefix}/customers/").status_code == 401  # a bearer token, not the key
        assert [spec.base_path for spec in specifications[0]] == [app.backend_prefix, app.gateway_prefix]
    other = Specification.load({**load_spec(), "info": {"title": "another", "version": "1"}})
    assert other is not specifications[0][0]  # another document, another specification


def test_the_adapters_read_what_connexion_was_given() -> None:
    schema = {"type": "object"}
    body = JSONBodyAdapter(schema=schema, required=True, encoding="latin-1", strict_validation=False)
    assert (body.schema, body.required, body.encoding) == (schema, True, "latin-1")
    parser = URIParserAdapter([], {"content": {}, "schema": schema})
    assert parser.body_schema is not None


def test_a_cached_signature_check_answers_as_connexions() -> None:
    def plain(token: str) -> None: ...

    def scoped(token: str, required_scopes: Any) -> None: ...

    def anything(**kwargs: Any) -> None: ...

    for function in (plain, scoped, anything):
        for keyword in ("required_scopes", "request"):
            assert InspectOnce._accepts_kwarg(function, keyword) == AbstractSecurityHandler._accepts_kwarg(
                function, keyword
            )


PARAMETERS = [
    {"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 100}},
    {"name": "since", "in": "query", "schema": {"type": "string", "format": "date"}},
    {"name": "tag", "in": "query", "required": True, "schema": {"type": "string", "nullable": True}},
]


@pytest.mark.parametrize("param", PARAMETERS, ids=lambda p: p["name"])
@pytest.mark.parametrize("value", [None, 0, 1, 100, 101, "x", "2024-02-30", "2024-02-28", "null"])
def test_the_compiled_parameter_validator_answers_as_connexions(param: dict[str, Any], value: Any) -> None:
    ours = CompiledParameterValidator.validate_parameter("query", value, param)
    theirs = ParameterValidator.validate_parameter("query", value, param)
    assert ours == theirs


def test_a_json_body_validator_is_still_connexions() -> None:
    assert issubclass(JSONBodyAdapter, JSONRequestBodyValidator)


FORM_SCHEMA = {
    "type": "object",
    "properties": {
        "note": {"type": "string", "nullable": True},
        "count": {"type": "integer", "nullable": True},
        "stock": {"type": "integer"},
    },
}


def test_a_form_keeps_as_text_what_connexions_typing_takes_for_null_or_cannot_type() -> None:
    """Connexion's form typing takes "null" and "None" for null in a nullable field and fails a whole form on
    one text that is not a number, naming no field; the seam keeps each such text for validation to judge."""
    parser = URIParserAdapter([], {"content": {}, "schema": FORM_SCHEMA})
    assert parser.resolve_form({"note": ["null"], "count": [" None "], "stock": ["7"]}) == {
        "note": None,
        "count": None,
        "stock": 7,
    }
    with pytest.raises(TypeValidationError):
        parser.resolve_form({"stock": ["x"]})
    form = FormAdapter(schema=FORM_SCHEMA, required=True, encoding="utf-8", strict_validation=False, uri_parser=parser)
    typed = form.resolve_form({"note": ["null"], "count": [" None "], "stock": ["x"]})
    assert typed == {"note": "null", "count": " None ", "stock": "x"}
    assert form.resolve_form({"count": ["7"], "stock": ["-3"]}) == {"count": 7, "stock": -3}
