"""The spec's decisions `form-text` and `empty-form-value` on the mock, over real HTTP, for every string
field of every writable schema, in each form media type, on POST, PUT and PATCH.

A form value is text: `null`, ` None `, `true` and `0` read back as sent where the field's schema
admits them, and are refused with 400 naming the field, changing nothing, where it does not (a decimal
must be a number); only the empty value is null, in a nullable field. Connexion's own form parsing took
`null` and `None` for null in a nullable field, which a service on Django REST Framework does not. The
same texts in JSON read back as sent (there the empty string is text too), through the fast path and
through Connexion alone. A number field in a form refuses the text `null`, as Django REST Framework does.
"""

from __future__ import annotations

import contextlib
import decimal
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from mock_server.app import create_app
from mock_server.settings import Settings
from mock_server.spec.schemas import Schema, SchemaValidator, load_spec
from mock_server.state.store import KEY_FIELDS
from shop_contract.document import dereference
from tests.conftest import API_KEY_HEADERS, BACKEND
from tests.support.live import running

JSON = "application/json"
URLENCODED = "application/x-www-form-urlencoded"
MULTIPART = "multipart/form-data"
FORMS = (URLENCODED, MULTIPART)
TEXTS = ("null", " None ", "true", "0", "")
"""Texts a form parser may take for null or another type, and the empty value, a form's null."""
CREATED = {"POST": 201, "PUT": 200, "PATCH": 200}


@dataclass(frozen=True)
class Writable:
    """A collection the API writes: its list and item paths, its identifier and its create body's schema."""

    collection: str
    path: str
    item: str
    key: str
    schema: Schema

    def url(self, identifier: Any) -> str:
        return BACKEND + self.item.replace("{" + self.key + "}", quote(str(identifier), safe=""))

    def fields(self, text: bool) -> list[str]:
        """The writable fields whose schema is a string (`text`), or those of any other type."""
        props = self.schema["properties"]
        return [name for name, prop in props.items() if not prop.get("readOnly") and (prop["type"] == "string") == text]


def writables() -> list[Writable]:
    """The spec's collections with a create, and the item path beside it."""
    spec = load_spec()
    found = []
    for path, item in spec["paths"].items():
        if "post" not in item:
            continue
        collection = path.strip("/")
        key = KEY_FIELDS[collection]
        body = dereference(item["post"]["requestBody"], spec)["content"]
        schema = body[URLENCODED]["schema"]
        assert body[MULTIPART]["schema"] == schema == body[JSON]["schema"], path
        found.append(Writable(collection, path, f"{path}{{{key}}}/", key, schema))
    return found


WRITABLES = writables()
OWNERS = {w.key: w for w in WRITABLES}
"""A field naming an item of another collection (a product's `productline`) by that collection's key."""
FORM_CASES = [
    pytest.param(w, name, media, method, id=f"{w.collection}.{name}-{media.split('/')[1]}-{method}")
    for w in WRITABLES
    for name in w.fields(text=True)
    for media in FORMS
    for method in CREATED
]
JSON_CASES = [
    pytest.param(w, name, method, id=f"{w.collection}.{name}-{method}")
    for w in WRITABLES
    for name in w.fields(text=True)
    if w.schema["properties"][name].get("nullable")  # where Connexion's typing took `null` for null
    for method in CREATED
]


class Api:
    """A live mock, and the first fixture item of each writable collection as a valid request body."""

    def __init__(self, client: httpx.Client) -> None:
        self.client = client
        self.made = 0
        self.bases = {w.collection: self.first_item(w) for w in WRITABLES}

    def first_item(self, w: Writable) -> dict[str, Any]:
        item = self.client.get(f"{BACKEND}{w.path}", params={"page_size": 1}).json()["results"][0]
        return {name: value for name, value in item.items() if name in w.fields(text=True) + w.fields(text=False)}

    def fresh(self, w: Writable) -> Any:
        self.made += 1
        return 900_000 + self.made if w.schema["properties"][w.key]["type"] == "integer" else f"FT{self.made}"

    def send(self, method: str, url: str, body: dict[str, Any], media: str) -> httpx.Response:
        if media == JSON:
            return self.client.request(method, url, json=body)
        text = {name: "" if value is None else str(value) for name, value in body.items()}
        if media == URLENCODED:
            return self.client.request(method, url, data=text)
        return self.client.request(method, url, files={name: (None, value) for name, value in text.items()})

    def create(self, w: Writable, identifier: Any) -> dict[str, Any]:
        response = self.client.post(f"{BACKEND}{w.path}", json=self.bases[w.collection] | {w.key: identifier})
        assert response.status_code == 201, response.text
        created: dict[str, Any] = response.json()
        return created

    def delete(self, w: Writable, identifier: Any) -> None:
        assert self.client.delete(w.url(identifier)).status_code == 204


@contextlib.contextmanager
def served(fast_path: bool) -> Iterator[Api]:
    with (
        running(create_app(Settings(fast_path=fast_path))) as origin,
        httpx.Client(base_url=origin, headers=API_KEY_HEADERS, timeout=30) as client,
    ):
        yield Api(client)


@pytest.fixture(scope="module")
def api() -> Iterator[Api]:
    """The mock as served (a form body always goes past the fast path, to Connexion)."""
    with served(fast_path=True) as mock:
        yield mock


@pytest.fixture(scope="module", params=[True, False], ids=["fast path", "Connexion alone"])
def json_api(request: pytest.FixtureRequest) -> Iterator[Api]:
    """The mock answering a valid JSON body on its fast path, and one answering every request through Connexion."""
    with served(fast_path=request.param) as mock:
        yield mock


def expected(prop: Schema, text: str, media: str) -> tuple[bool, Any]:
    """(accepted, the value read back): the empty value of a form is null in a nullable field; any other
    value is the text, accepted where the field's schema admits it."""
    value = None if media != JSON and text == "" and prop.get("nullable") else text
    return not SchemaValidator(prop).errors(value), value


def same(prop: Schema, stored: Any, value: Any) -> bool:
    """Equal as the spec compares: a decimal by value (the mock normalises it to two places)."""
    if prop.get("format") == "decimal" and isinstance(stored, str) and isinstance(value, str):
        return decimal.Decimal(stored) == decimal.Decimal(value)
    return bool(stored == value and type(stored) is type(value))


@pytest.mark.parametrize(("w", "name", "media", "method"), FORM_CASES)
def test_a_form_text_reads_back_as_sent(api: Api, w: Writable, name: str, media: str, method: str) -> None:
    write_each_text(api, w, name, media, method)


@pytest.mark.parametrize(("w", "name", "method"), JSON_CASES)
def test_a_json_text_reads_back_as_sent_on_both_paths(json_api: Api, w: Writable, name: str, method: str) -> None:
    write_each_text(json_api, w, name, JSON, method)


def write_each_text(api: Api, w: Writable, name: str, media: str, method: str) -> None:
    """Each of `TEXTS` written to the field `name` by `method` in `media`, and read back."""
    prop = w.schema["properties"][name]
    for text in TEXTS:
        accepted, value = expected(prop, text, media)
        identifier = text if name == w.key and accepted else api.fresh(w)
        owner = OWNERS.get(name) if name != w.key and accepted else None
        if owner is not None:
            api.create(owner, value)  # the item the field names must exist
        before = None if method == "POST" else api.create(w, identifier)
        body = {name: text} if method == "PATCH" else api.bases[w.collection] | {w.key: identifier, name: text}
        answer = api.send(method, f"{BACKEND}{w.path}" if method == "POST" else w.url(identifier), body, media)
        read = api.client.get(w.url(identifier))
        sent = f"{method} {name}={text!r} as {media}"
        if accepted:
            assert answer.status_code == CREATED[method], f"{sent}: {answer.status_code} {answer.text}"
            assert same(prop, answer.json()[name], value), f"{sent}: answered {answer.json()[name]!r}"
            assert read.status_code == 200 and same(prop, read.json()[name], value), f"{sent}: read {read.text}"
        else:
            assert answer.status_code == 400, f"{sent}: {answer.status_code} {answer.text}"
            assert [error["field"] for error in answer.json()["errors"]] == [name], f"{sent}: {answer.text}"
            assert read.status_code == (404 if before is None else 200), f"{sent}: read {read.status_code}"
            assert before is None or read.json() == before, f"{sent}: changed the item to {read.text}"
        if read.status_code == 200:
            api.delete(w, identifier)
        if owner is not None:
            api.delete(owner, value)


@pytest.mark.parametrize("media", FORMS)
def test_a_number_field_refuses_a_null_text_and_takes_the_empty_value_for_null(api: Api, media: str) -> None:
    for w in WRITABLES:
        for name in w.fields(text=False):
            prop = w.schema["properties"][name]
            identifier = api.fresh(w)
            before = api.create(w, identifier)
            for text in ("null", "None", ""):
                answer = api.send("PATCH", w.url(identifier), {name: text}, media)
                sent = f"PATCH {w.collection}.{name}={text!r} as {media}"
                if text == "" and prop.get("nullable"):
                    assert answer.status_code == 200 and answer.json()[name] is None, f"{sent}: {answer.text}"
                    before = answer.json()
                else:
                    assert answer.status_code == 400, f"{sent}: {answer.status_code} {answer.text}"
                    assert [error["field"] for error in answer.json()["errors"]] == [name], f"{sent}: {answer.text}"
                assert api.client.get(w.url(identifier)).json() == before, sent
            api.delete(w, identifier)
