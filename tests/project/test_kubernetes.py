"""deploy/kubernetes/ (issue 39): every resource the kustomization lists is valid against the
Kubernetes schemas (kubernetes-validate, offline, strict: an unknown field is an error), and the
mock's Deployment is what docs/platform.md promises: two replicas probed on the mock's own probe
routes, non-root, a read-only root filesystem, resource requests, a PodDisruptionBudget over them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from mock_server.control.probes import LIVE, READY

DEPLOY = Path(__file__).resolve().parents[2] / "deploy" / "kubernetes"
VERSION = "1.37.0"


def rendered() -> list[dict[str, Any]]:
    """The kustomization's resources, as `kubectl kustomize` renders a base without patches."""
    kustomization = yaml.safe_load((DEPLOY / "kustomization.yaml").read_text(encoding="utf-8"))
    return [
        document
        for name in kustomization["resources"]
        for document in yaml.safe_load_all((DEPLOY / name).read_text(encoding="utf-8"))
        if document
    ]


def named(kind: str, name: str) -> dict[str, Any]:
    [found] = [doc for doc in rendered() if doc["kind"] == kind and doc["metadata"]["name"] == name]
    return found


@pytest.mark.parametrize("document", rendered(), ids=lambda doc: f"{doc['kind']}/{doc['metadata']['name']}")
def test_each_resource_is_valid_against_the_kubernetes_schemas(document: dict[str, Any]) -> None:
    kubernetes_validate.validate(document, VERSION, strict=True)  # raises, naming the field and why


def test_a_broken_manifest_is_refused() -> None:
    broken = named("Deployment", "shop-mock")
    broken["spec"]["replicas"] = "two"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, VERSION, strict=True)


def test_the_mock_runs_two_probed_non_root_read_only_replicas_under_a_disruption_budget() -> None:
    deployment = named("Deployment", "shop-mock")
    assert deployment["spec"]["replicas"] == 2
    pod = deployment["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    [mock] = pod["containers"]
    assert mock["securityContext"]["readOnlyRootFilesystem"] is True
    assert mock["securityContext"]["allowPrivilegeEscalation"] is False
    assert {"cpu", "memory"} <= mock["resources"]["requests"].keys()
    assert mock["livenessProbe"]["httpGet"]["path"] == LIVE
    assert mock["readinessProbe"]["httpGet"]["path"] == READY
    assert "/tmp" in [mount["mountPath"] for mount in mock["volumeMounts"]]  # the only writable place
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    for selector in (
        named("PodDisruptionBudget", "shop-mock")["spec"]["selector"]["matchLabels"],
        named("Service", "shop-mock")["spec"]["selector"],
    ):
        assert selector.items() <= labels.items()
    state = {env["name"]: env.get("value") for env in mock["env"]}["SHOP_MOCK_STATE"]
    assert state.startswith("redis://shop-mock-redis:") and named("Service", "shop-mock-redis")
