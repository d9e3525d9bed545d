"""Reading a spec (shop_contract/document.py), the one loader of the mock and the suite: what it refuses
before anything copies or walks the document, in one `SpecError`."""

from __future__ import annotations

from pathlib import Path

import pytest

from shop_contract.document import MAX_SPEC_BYTES, MAX_SPEC_VALUES, SpecError, bundled_spec, read
from tests.support.hostile_files import laughs, sparse


def test_aliases_that_expand_past_the_bound_are_refused_at_once(tmp_path: Path) -> None:
    """Before, the mock hung at start and the suite in its run: 9**8 values, copied where the spec is
    walked, from a file of 2 KB more."""
    spec = tmp_path / "laughs.yaml"
    spec.write_text(laughs(8), encoding="utf-8")
    assert MAX_SPEC_VALUES < 9**8
    with pytest.raises(SpecError, match=f"its YAML aliases expand to more than {MAX_SPEC_VALUES} values"):
        read(spec)


def test_aliases_within_the_bound_are_read_as_written(tmp_path: Path) -> None:
    spec = tmp_path / "few.yaml"
    spec.write_text(laughs(3), encoding="utf-8")
    assert read(spec)["x-level3"] == [[[["lol"] * 9] * 9] * 9] * 9


def test_a_spec_larger_than_the_bound_is_refused_without_reading_it_all(tmp_path: Path) -> None:
    """/dev/zero was read until memory ran out."""
    with pytest.raises(SpecError, match=f"larger than {MAX_SPEC_BYTES} bytes"):
        read(sparse(tmp_path / "large.yaml", 2**30))


def test_the_bundled_spec_is_far_within_both_bounds() -> None:
    assert bundled_spec().stat().st_size < MAX_SPEC_BYTES // 100
    assert read()["openapi"].startswith("3.")
