"""Read a data set in the fixture format: one JSON file per collection, records in the API's shape.

Every record is validated against the spec's response schema of its collection. Identifiers must be
unique, and every reference must resolve. The records are checked one at a time, as the store reads
them in `LOAD_ORDER`, parents first. So a data set of 10^6 products never exists as a list of dicts.
The first problem stops the load with a message naming the file, the record and the field. Nothing is
half loaded, because the store swaps in a data set only once all of it has been read.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mock_server.spec.inputs import unencodable
from mock_server.spec.schemas import Schema, SchemaValidator, component_schema
from mock_server.state.store import KEY_FIELDS, LOAD_ORDER, RELATIONS, Dataset

# It maps a collection to the spec's response schema of one record.
RECORD_SCHEMAS = {
    "productlines": "ProductLine",
    "products": "Product",
    "orderdetails": "Orderdetail",
    "customers": "Customer",
    "orders": "Order",
    "payments": "Payment",
}
WHITESPACE = re.compile(r"[ \t\n\r]*")


class FixtureError(Exception):
    """A data set that cannot be loaded. The message names the file, the record and the field."""


def record_fields(spec: Schema | None = None) -> dict[str, tuple[str, ...]]:
    """collection -> the fields of its records, in the spec's order. That is the layout of the store's rows."""
    return {name: tuple(component_schema(schema, spec)["properties"]) for name, schema in RECORD_SCHEMAS.items()}


def read_fixtures(directory: Path, spec: Schema | None = None) -> Dataset:
    """The six collection files of `directory`, each read and checked lazily, as it is consumed.

    The records are checked against the schemas of `spec`, by default the bundled one.
    """
    if not directory.is_dir():
        raise FixtureError(f"{directory}: not a directory")
    for name in KEY_FIELDS:
        if not (directory / f"{name}.json").is_file():
            raise FixtureError(f"{directory / f'{name}.json'}: missing")
    return DatasetCheck(directory, spec).records({name: _array(directory / f"{name}.json") for name in LOAD_ORDER})


def checked_dataset(dataset: Any, source: str = "state", spec: Schema | None = None) -> Dataset:
    """A whole data set in one JSON value, a state import, checked as the store reads it."""
    if not isinstance(dataset, dict) or set(dataset) != set(KEY_FIELDS):
        raise FixtureError(f"{source}: expected exactly the collections {', '.join(KEY_FIELDS)}")
    for name, records in dataset.items():
        if not isinstance(records, list):
            raise FixtureError(f"{Path(source) / f'{name}.json'}: expected a JSON array of records")
    return DatasetCheck(Path(source), spec).records({name: iter(dataset[name]) for name in LOAD_ORDER})


class DatasetCheck:
    """The keys seen so far per collection, against which later records' references are checked."""

    def __init__(self, source: Path, spec: Schema | None = None) -> None:
        self.source = source
        self.spec = spec
        self.keys: dict[str, set[Any]] = {name: set() for name in KEY_FIELDS}

    def records(self, sources: dict[str, Iterator[Any]]) -> Dataset:
        return {name: self._checked(name, records) for name, records in sources.items()}

    def _checked(self, collection: str, records: Iterator[Any]) -> Iterator[dict[str, Any]]:
        where = self.source / f"{collection}.json"
        validator = SchemaValidator(component_schema(RECORD_SCHEMAS[collection], self.spec))
        key_field = KEY_FIELDS[collection]
        seen = self.keys[collection]
        references = [(r.field, r.parent, self.keys[r.parent]) for r in RELATIONS if r.child == collection]
        for position, record in enumerate(records):
            field = unencodable(record)
            if field is not None:  # Checked first, because the schema validator cannot even read such text.
                raise FixtureError(
                    f"{where}: record {position}, field {field!r}: not valid Unicode text (a lone surrogate)"
                )
            errors = validator.errors(record)
            if errors:
                first = errors[0]
                label = _label(collection, record) if isinstance(record, dict) else "not an object"
                raise FixtureError(f"{where}: record {position} ({label}), field {first.field!r}: {first.message}")
            key = record[key_field]
            if key in seen:
                raise FixtureError(f"{where}: record {position}, field {key_field!r}: duplicate {key!r}")
            seen.add(key)
            for field, parent, parent_keys in references:
                if record[field] not in parent_keys:
                    raise FixtureError(
                        f"{where}: record {position} ({_label(collection, record)}), field "
                        f"{field!r}: no {parent} record {record[field]!r}"
                    )
            yield record


def _array(path: Path) -> Iterator[Any]:
    """The elements of the JSON array in `path`, decoded one at a time."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise FixtureError(f"{path}: not valid JSON ({error})") from None
    decode = json.JSONDecoder().raw_decode
    position = _skip(text, 0)
    if not text.startswith("[", position):
        raise _malformed(path, text)
    position = _skip(text, position + 1)
    closed = text.startswith("]", position)
    while not closed:
        try:
            record, position = decode(text, position)
        except json.JSONDecodeError as error:
            raise FixtureError(f"{path}: not valid JSON ({error})") from None
        except RecursionError:
            raise FixtureError(f"{path}: nested too deeply") from None
        yield record
        position = _skip(text, position)
        if text.startswith(",", position):
            position = _skip(text, position + 1)
        elif text.startswith("]", position):
            closed = True
        else:
            raise _malformed(path, text)
    if _skip(text, position + 1) != len(text):
        raise _malformed(path, text)


def _skip(text: str, position: int) -> int:
    match = WHITESPACE.match(text, position)
    assert match is not None  # The pattern matches the empty string.
    return match.end()


def _malformed(path: Path, text: str) -> FixtureError:
    """What is wrong with a file the streaming reader could not take. It is its JSON error, else its shape."""
    try:
        json.loads(text)
    except json.JSONDecodeError as error:
        return FixtureError(f"{path}: not valid JSON ({error})")
    return FixtureError(f"{path}: expected a JSON array of records")


def _label(collection: str, record: dict[str, Any]) -> str:
    key_field = KEY_FIELDS[collection]
    return f"{key_field}={record.get(key_field)!r}"
