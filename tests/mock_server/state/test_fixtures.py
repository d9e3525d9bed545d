"""Loading fixtures validates every record and reference; errors name the file, record and field."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mock_server.settings import DEFAULT_FIXTURES
from mock_server.state.fixtures import FixtureError, read_fixtures, record_fields
from mock_server.state.memory import MemoryStore

Records = list[dict[str, Any]]


@pytest.fixture
def fixtures(tmp_path: Path) -> Path:
    target = tmp_path / "fixtures"
    shutil.copytree(DEFAULT_FIXTURES, target)
    return target


def edit(directory: Path, name: str, change: Callable[[Records], None]) -> None:
    path = directory / f"{name}.json"
    records = json.loads(path.read_text(encoding="utf-8"))
    change(records)
    path.write_text(json.dumps(records), encoding="utf-8")


def load(directory: Path) -> MemoryStore:
    return MemoryStore(record_fields(), read_fixtures(directory))


def test_the_default_fixtures_load() -> None:
    store = load(DEFAULT_FIXTURES)
    assert store.count("products") == 75
    assert list(store.inconsistencies()) == []


@pytest.mark.parametrize(
    ("name", "change", "expected"),
    [
        ("products", lambda r: r[3].update(msrp="12.345"), ["products.json", "record 3", "'msrp'"]),
        ("products", lambda r: r[0].update(productline="Submarines"), ["products.json", "record 0", "'productline'"]),
        ("customers", lambda r: r[1].update(customername="x" * 51), ["customers.json", "record 1", "'customername'"]),
        ("customers", lambda r: r[2].pop("city"), ["customers.json", "record 2", "'city'"]),
        ("orders", lambda r: r[5].update(orderdate="2003-02-30"), ["orders.json", "record 5", "'orderdate'"]),
        ("orders", lambda r: r[0].update(customernumber=1), ["orders.json", "record 0", "'customernumber'"]),
        ("orderdetails", lambda r: r.append(dict(r[0])), ["orderdetails.json", "'id'", "duplicate"]),
        ("productlines", lambda r: r[0].update(image="%%%"), ["productlines.json", "record 0", "'image'"]),
        ("payments", lambda r: r[0].update(amount="."), ["payments.json", "record 0", "'amount'"]),
    ],
)
def test_a_broken_record_is_named(
    fixtures: Path, name: str, change: Callable[[Records], None], expected: list[str]
) -> None:
    edit(fixtures, name, change)
    with pytest.raises(FixtureError) as error:
        load(fixtures)
    for part in expected:
        assert part in str(error.value)


def test_a_missing_file_and_bad_json_are_named(fixtures: Path) -> None:
    (fixtures / "payments.json").unlink()
    with pytest.raises(FixtureError, match=r"payments\.json: missing"):
        load(fixtures)
    (fixtures / "payments.json").write_text("[{", encoding="utf-8")
    with pytest.raises(FixtureError, match=r"payments\.json: not valid JSON"):
        load(fixtures)
    with pytest.raises(FixtureError, match="not a directory"):
        load(fixtures / "nope")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", "not valid JSON"),
        ("[", "not valid JSON"),
        ("[RECORD,]", "not valid JSON"),
        ("[RECORD RECORD]", "not valid JSON"),
        ("[RECORD] []", "not valid JSON"),
        ("RECORD", "expected a JSON array of records"),
        ("\ufeff[]", "not valid JSON"),
    ],
)
def test_a_malformed_file_is_named_however_it_breaks(fixtures: Path, text: str, expected: str) -> None:
    """RECORD stands for a valid record, so that the file's shape is its first problem."""
    path = fixtures / "productlines.json"
    record = json.dumps(json.loads(path.read_text(encoding="utf-8"))[0])
    path.write_text(text.replace("RECORD", record), encoding="utf-8")
    with pytest.raises(FixtureError, match=rf"productlines\.json: {expected}"):
        load(fixtures)


def test_whitespace_anywhere_between_records_is_fine(fixtures: Path) -> None:
    path = fixtures / "productlines.json"
    records = json.loads(path.read_text(encoding="utf-8"))
    path.write_text("\n\t [ \r\n" + " ,\n ".join(json.dumps(r) for r in records) + "\n ] \n", encoding="utf-8")
    assert load(fixtures).count("productlines") == len(records)
