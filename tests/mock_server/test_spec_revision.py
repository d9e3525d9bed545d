"""`--spec`: the mock serves and checks data against the revision it was given, not the bundled spec."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from starlette.testclient import TestClient

from mock_server.app import create_app
from mock_server.settings import DEFAULT_FIXTURES, Settings
from mock_server.state.fixtures import FixtureError
from shop_contract.document import bundled_spec


@pytest.fixture
def stricter_revision(tmp_path: Path) -> Path:
    """The contract with product line descriptions limited to 10 characters (the fixtures' are longer)."""
    spec = yaml.safe_load(bundled_spec().read_text(encoding="utf-8"))
    for schema in ("ProductLine", "ProductLineRequest"):
        spec["components"]["schemas"][schema]["properties"]["textdescription"]["maxLength"] = 10
    path = tmp_path / "openapi.yaml"
    path.write_text(yaml.safe_dump(spec), encoding="utf-8")
    return path


def test_fixtures_are_checked_against_the_served_revision(stricter_revision: Path) -> None:
    with pytest.raises(FixtureError, match=r"productlines\.json: record 0 .* field 'textdescription'"):
        create_app(Settings(spec=stricter_revision))


def test_requests_and_state_imports_follow_the_served_revision(stricter_revision: Path) -> None:
    app = create_app(Settings(spec=stricter_revision, fixtures=None))
    with TestClient(app, headers={"X-API-Key": "dev-api-key"}) as client:
        too_long = {"productline": "Boats", "textdescription": "eleven char"}
        assert client.post("/shop/api/v1/productlines/", json=too_long).status_code == 400
        assert client.post("/shop/api/v1/productlines/", json={**too_long, "textdescription": "ten chars!"}).is_success
        state = {name: json.loads((DEFAULT_FIXTURES / f"{name}.json").read_text()) for name in app.store.tables}
        imported = client.put("/__mock__/state", json=state)
        assert imported.status_code == 400 and "textdescription" in imported.json()["detail"]
