"""The behaviour of the API's operations, one `Collection` per resource with an identifier.

Handlers receive what was already validated against the spec. They keep the fields of the resource,
normalise decimals, call the store and answer JSON. The answer has an explicit Content-Type, because
the spec's problem+json error responses make every operation multi-content-type for Connexion.

A read is a plain `Reader`, `reader(scope, **params) -> body`. So Connexion, through `read_handler`,
and `mock_server.api.fastpath` call the very same code. It takes the request's scope, not the URL the
client called. Only a list needs that URL, for its links, and building it was a tenth of a GET of one
record.

A write is a plain `Writer` too, `writer(**params) -> (status, body)`, which Connexion calls through
`write_handler`. The fast path sends its answer as it is. Building Connexion's response and then
Starlette's from it was a tenth of a POST.
"""

from __future__ import annotations

import decimal
import re
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import quote

import orjson
from connexion.context import request
from connexion.lifecycle import ConnexionResponse
from starlette.types import Scope

from mock_server.api.pagination import PageSizePolicy, paginate
from mock_server.http.forwarded import public_origin
from mock_server.spec.schemas import Schema
from mock_server.state.store import KEY_FIELDS, Key, Record, Store

CENT = decimal.Decimal("0.01")
# A decimal already as `quantize(CENT)` writes it is kept as sent. That is ASCII digits, no leading zero
# and two places. Making a Decimal of it and back cost a POST two microseconds a money field.
IN_CENTS = re.compile(r"-?(?:0|[1-9][0-9]*)\.[0-9]{2}")


Reader = Callable[..., bytes]  # reader(scope, **params) -> the JSON body of a 200 answer.
Answer = tuple[int, bytes]  # A write's status and JSON body. The body is empty for 204.
Writer = Callable[..., Answer]  # writer(**params) -> its answer.
NO_CONTENT: Answer = (204, b"")


def json_response(body: bytes, status: int = 200) -> ConnexionResponse:
    return ConnexionResponse(
        status_code=status, mimetype="application/json", content_type="application/json", body=body
    )


def encode(value: Any) -> bytes:
    """Compact UTF-8 JSON, by orjson, because the stdlib encoder was a sixth of a page read's time."""
    return orjson.dumps(value)


def no_content() -> ConnexionResponse:
    return ConnexionResponse(status_code=204)


def public_url(scope: Scope) -> str:
    """The URL the client called, with its path still percent-encoded.

    It is the URL as seen through a proxy that sets X-Forwarded-Host and -Proto, as
    mock_server.http.forwarded reads them.
    """
    path = scope.get("raw_path") or quote(scope["path"]).encode()
    query = scope.get("query_string", b"")
    url = f"{public_origin(scope)}{path.decode('latin-1')}"
    return f"{url}?{query.decode('latin-1')}" if query else url


def read_handler(reader: Reader) -> Callable[..., Awaitable[ConnexionResponse]]:
    """The Connexion handler of a read. It answers the reader's body for the request."""

    async def handler(**params: Any) -> ConnexionResponse:
        return json_response(reader(request.scope, **params))

    return handler


def write_handler(writer: Writer) -> Callable[..., Awaitable[ConnexionResponse]]:
    """The Connexion handler of a write. It answers the writer's answer as Connexion's response."""

    async def handler(**params: Any) -> ConnexionResponse:
        status, body = writer(**params)
        return no_content() if status == 204 else json_response(body, status)

    return handler


class Collection:
    """Create, list, read, replace, patch and delete the records of one store collection.

    `schema` is the spec's response schema of a record. Its writable properties, those not readOnly, are
    what a request may set. Its `format: decimal` properties are normalised to two places.
    """

    def __init__(self, store: Store, collection: str, schema: Schema, pages: PageSizePolicy) -> None:
        self.store = store
        self.collection = collection
        self.key_field = KEY_FIELDS[collection]
        self.pages = pages
        properties: dict[str, Schema] = schema["properties"]
        self.schema = schema
        self.writable = [name for name, prop in properties.items() if not prop.get("readOnly")]
        self.unset = dict.fromkeys(properties)  # What a POST does not send is null.
        self.reset = dict.fromkeys(self.writable)  # What a PUT does not send is reset to null.
        self.decimals = {name for name, prop in properties.items() if prop.get("format") == "decimal"}

    def list(self, scope: Scope, page: int | None = None, page_size: int | None = None, **_: Any) -> bytes:
        asked = self.pages.request(page, page_size)
        count, results = self.store.counted_page(self.collection, asked.offset, asked.size)
        return encode(paginate(asked, count, results, public_url(scope)))

    def get(self, scope: Scope, **params: Any) -> bytes:
        return encode(self.store.get(self.collection, self._key(params)))

    def create(self, body: dict[str, Any], **_: Any) -> Answer:
        record = self.unset | self._fields(body)
        return 201, encode(self.store.create(self.collection, record))

    def update(self, body: dict[str, Any], **params: Any) -> Answer:
        """PUT replaces every writable field, so one not sent is reset to null."""
        changes = self.reset | self._fields(body)
        return 200, encode(self.store.update(self.collection, self._key(params), changes))

    def patch(self, body: dict[str, Any] | None = None, **params: Any) -> Answer:
        changes = self._fields(body or {})
        return 200, encode(self.store.update(self.collection, self._key(params), changes))

    def delete(self, **params: Any) -> Answer:
        self.store.delete(self.collection, self._key(params))
        return NO_CONTENT

    def owned(self, child: str, field: str) -> Reader:
        """The reader of a sub-list. It lists the `child` records whose `field` is this record's key."""

        def list_owned(scope: Scope, page: int | None = None, page_size: int | None = None, **params: Any) -> bytes:
            asked = self.pages.request(page, page_size)
            count, results = self.store.owned(child, field, self._key(params), asked.offset, asked.size)
            return encode(paginate(asked, count, results, public_url(scope)))

        return list_owned

    def _key(self, params: dict[str, Any]) -> Key:
        key: Key = params[self.key_field]
        return key

    def _fields(self, body: dict[str, Any]) -> Record:
        """The writable fields of a validated body. Unknown and read-only ones are ignored."""
        fields = {name: body[name] for name in self.writable if name in body}
        for name in self.decimals:
            value = fields.get(name)  # None when absent too, and then there is nothing to normalise.
            if value is not None and not (type(value) is str and IN_CENTS.fullmatch(value)):
                fields[name] = str(decimal.Decimal(value).quantize(CENT))
        return fields
