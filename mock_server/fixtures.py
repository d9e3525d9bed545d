"""Load a data set in the fixture format: one JSON file per collection, records in the API's shape.

Every record is validated against the spec's response schema of its collection, identifiers must be
unique and every reference must resolve. The first problem stops the load with a message naming the
file, the record and the field; nothing is half loaded, because the caller gets the data set only
when all of it is sound.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mock_server.schemas import SchemaValidator, component_schema
from mock_server.store import KEY_FIELDS, RELATIONS, Dataset

# collection -> the spec's response schema of one record
RECORD_SCHEMAS = {
    "productlines": "ProductLine",
    "products": "Product",
    "orderdetails": "Orderdetail",
    "customers": "Customer",
    "orders": "Order",
    "payments": "Payment",
}


class FixtureError(Exception):
    """A data set that cannot be loaded; the message names the file, the record and the field."""


def load_fixtures(directory: Path) -> Dataset:
    """Read and validate the six collection files of `directory`."""
    if not directory.is_dir():
        raise FixtureError(f"{directory}: not a directory")
    dataset = {name: _read(directory / f"{name}.json") for name in KEY_FIELDS}
    validate_dataset(dataset, source=directory)
    return dataset


def validate_dataset(dataset: Any, source: Path | str = "state") -> None:
    """Check a whole data set (a fixture directory, or a state import) before anyone uses it."""
    if not isinstance(dataset, dict) or set(dataset) != set(KEY_FIELDS):
        raise FixtureError(f"{source}: expected exactly the collections {', '.join(KEY_FIELDS)}")
    keys: dict[str, set[Any]] = {}
    for name, records in dataset.items():
        where = f"{Path(str(source)) / f'{name}.json'}"
        if not isinstance(records, list):
            raise FixtureError(f"{where}: expected a JSON array of records")
        keys[name] = _check_records(where, name, records)
    for relation in RELATIONS:
        where = f"{Path(str(source)) / f'{relation.child}.json'}"
        for position, record in enumerate(dataset[relation.child]):
            if record[relation.field] not in keys[relation.parent]:
                raise FixtureError(
                    f"{where}: record {position} ({_label(relation.child, record)}), field "
                    f"{relation.field!r}: no {relation.parent} record {record[relation.field]!r}"
                )


def _read(path: Path) -> Any:
    try:
        with path.open(encoding="utf-8") as stream:
            return json.load(stream)
    except FileNotFoundError:
        raise FixtureError(f"{path}: missing") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise FixtureError(f"{path}: not valid JSON ({error})") from None


def _check_records(where: str, collection: str, records: list[Any]) -> set[Any]:
    validator = SchemaValidator(component_schema(RECORD_SCHEMAS[collection]))
    key_field = KEY_FIELDS[collection]
    seen: set[Any] = set()
    for position, record in enumerate(records):
        errors = validator.errors(record)
        if errors:
            first = errors[0]
            label = _label(collection, record) if isinstance(record, dict) else "not an object"
            raise FixtureError(f"{where}: record {position} ({label}), field {first.field!r}: {first.message}")
        if record[key_field] in seen:
            raise FixtureError(f"{where}: record {position}, field {key_field!r}: duplicate {record[key_field]!r}")
        seen.add(record[key_field])
    return seen


def _label(collection: str, record: dict[str, Any]) -> str:
    key_field = KEY_FIELDS[collection]
    return f"{key_field}={record.get(key_field)!r}"
