"""Connexion validates each spec document once per process (mock_server.api.connexion_seam): an invalid
document still fails every time, a valid one is remembered, and a changed one is validated anew."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import connexion.spec
import pytest
import yaml
from connexion.exceptions import InvalidSpecification

from mock_server.app import create_app
from mock_server.settings import Settings
from mock_server.spec.schemas import load_spec


def written(tmp_path: Path, document: dict[str, Any]) -> Path:
    path = tmp_path / "openapi.yaml"
    path.write_text(yaml.safe_dump(document), encoding="utf-8")
    return path


def test_an_invalid_spec_fails_on_every_app(tmp_path: Path) -> None:
    broken = copy.deepcopy(load_spec())
    broken["info"]["version"] = ["not", "a", "string"]
    spec = written(tmp_path, broken)
    for _ in range(2):
        with pytest.raises(InvalidSpecification):
            create_app(Settings(spec=spec, fixtures=None))


def test_a_valid_spec_is_validated_once_and_a_changed_one_anew(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    validations: list[Any] = []
    make_validator = connexion.spec.create_spec_validator

    def counted(spec: Any) -> Any:
        validations.append(spec)
        return make_validator(spec)

    monkeypatch.setattr(connexion.spec, "create_spec_validator", counted)
    changed = copy.deepcopy(load_spec())
    changed["info"]["description"] = f"changed: a document this process has not validated yet ({tmp_path.name})"
    spec = written(tmp_path, changed)
    create_app(Settings(spec=spec, fixtures=None))
    first = len(validations)
    assert first == 2  # the backend's document and the gateway's: each new
    create_app(Settings(spec=spec, fixtures=None))
    assert len(validations) == first
