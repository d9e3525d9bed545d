"""A consumer contract recorded on the mock, verified against the real DRF test backend
(tests/support/drf): the correct service and the one answering as the spec admits pass; the
`default_lookup` defect (an identifier with a dot is created but never found again) fails exactly the
interactions that address such an item, as the consumer's own names did."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

pytest.importorskip("django")
pytest.importorskip("rest_framework")
drf = pytest.importorskip("tests.support.drf.server", reason="the DRF test backend is not on this branch")

from mock_server.app import create_app  # noqa: E402
from mock_server.settings import DEFAULT_API_KEY, Settings  # noqa: E402
from tests.support.live import running  # noqa: E402
from tests.support.ports import free_port  # noqa: E402
from tests.support.suite import shop_contract, violations  # noqa: E402

pytestmark = pytest.mark.drf  # the DRF backend under a real server (tox -e drf)

API = "/shop/api/v1"
KEY = {"X-API-Key": DEFAULT_API_KEY}


@pytest.fixture(scope="module")
def realm() -> Iterator[str]:
    """A mock whose realm issues the tokens the backend verifies (it needs one to start)."""
    port = free_port()
    with running(create_app(Settings(port=port)), port=port) as origin:
        yield origin


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A front end naming its product line "Kites v.2": created by a form with an empty field, read,
    patched; the lists it shows."""
    path = tmp_path_factory.mktemp("consumer-drf") / "web.json"
    with running(create_app(Settings())) as origin, httpx.Client(base_url=origin, headers=KEY, timeout=30) as http:
        http.get(f"{API}/productlines/", params={"page_size": 5})
        http.post(f"{API}/productlines/", data={"productline": "Kites v.2", "textdescription": ""})
        http.get(f"{API}/productlines/Kites%20v.2/")
        http.patch(f"{API}/productlines/Kites%20v.2/", json={"htmldescription": "<p>Kites</p>"})
        http.get(f"{API}/products/", params={"page": 2})
        path.write_bytes(http.get("/__mock__/contract", params={"name": "web"}).content)
    return path


@pytest.mark.parametrize("variant", ["correct", "blank_kept"])
def test_the_drf_backend_honours_the_contract(realm: str, recorded: Path, tmp_path: Path, variant: str) -> None:
    with drf.serve(variant, realm_url=f"{realm}/realms/shop") as origin:
        args = ["--consumer", str(recorded), "--base-url", f"{origin}{API}", "--api-key", DEFAULT_API_KEY, "--quiet"]
        outcome = shop_contract(args, tmp_path)
    assert outcome.code == 0, outcome.stdout[-4000:] + outcome.stderr
    assert {i["verdict"] for i in outcome.findings["consumer"]["interactions"]} == {"ok"}


def test_a_drf_backend_losing_dotted_identifiers_fails_the_interactions_naming_one(
    realm: str, recorded: Path, tmp_path: Path
) -> None:
    with drf.serve("default_lookup", realm_url=f"{realm}/realms/shop") as origin:
        args = ["--consumer", str(recorded), "--base-url", f"{origin}{API}", "--api-key", DEFAULT_API_KEY, "--quiet"]
        outcome = shop_contract(args, tmp_path)
    assert outcome.code == 1, outcome.stdout[-4000:] + outcome.stderr
    found = violations(outcome)
    assert {(v["operation"], v["check"]) for v in found} == {
        ("get_product_line#1", "consumer_status"),
        ("patch_product_line#1", "consumer_status"),
    }
    assert all("the mock answered HTTP 200" in v["rule"] and v["response"].startswith("HTTP 404") for v in found)
