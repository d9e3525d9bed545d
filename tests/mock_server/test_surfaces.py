"""The two surfaces the mock serves (mock_server/surfaces.py): the gateway's part of the spec, and the
operation index built once per spec."""

from __future__ import annotations

import copy

from mock_server.spec.schemas import load_spec, mount_points
from mock_server.surfaces import gateway_paths, gateway_spec, operation_index

SPEC = load_spec()


def test_the_gateway_serves_the_operations_that_name_their_own_server_with_a_bearer_token() -> None:
    before = copy.deepcopy(SPEC)
    gateway = gateway_spec(SPEC)
    assert list(gateway["paths"]) == gateway_paths(SPEC) and gateway_paths(SPEC)
    assert all("servers" in SPEC["paths"][path] for path in gateway_paths(SPEC))
    operations = [op for item in gateway["paths"].values() for op in item.values() if "operationId" in op]
    assert operations and all(op["security"] == [{"JWTAuth": []}] for op in operations)
    assert before == SPEC, "the served spec was changed"


def test_mocks_of_one_spec_share_its_index_and_another_spec_gets_its_own() -> None:
    mounts = mount_points(SPEC)
    assert operation_index(SPEC, *mounts) is operation_index(SPEC, *mounts)
    other = copy.deepcopy(SPEC)
    dropped = gateway_paths(other)[0]
    del other["paths"][dropped]
    index = operation_index(other, *mounts)
    assert index is not operation_index(SPEC, *mounts)
    assert dropped not in index.templates() and dropped in operation_index(SPEC, *mounts).templates()
    assert operation_index(SPEC, "/elsewhere", mounts[1]).find("GET", "/elsewhere/productlines/") is not None
