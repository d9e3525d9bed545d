"""The image as a platform team runs it (issue 39), over real HTTP with podman: the mock's pod of
deploy/kubernetes/mock.yaml (its environment, its non-root user, its read-only root filesystem with
an emptyDir at /tmp, its dropped capabilities, its admin token from a Secret) on Redis, published on
another port than its own (`-p 127.0.0.1:PORT:8000`). The admin API and the dashboard answer with the
token and refuse without it, from another origin and for another name; the probes answer without a
token for any `Host`. Then two such replicas behind nginx, which passes the client's `Host` on
(examples/compose/nginx.conf), the same. Every request is bounded (`WAIT_S`): a replica that stops
answering fails the test in seconds, with every container's log. Marked `container` (tox -e container).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from tests.support.podman import IMAGE, SERVICES_IMAGE, answers, container, podman, require_image, unique, wait_for
from tests.support.ports import free_port

pytestmark = pytest.mark.container

ROOT = Path(__file__).resolve().parents[3]
MANIFEST = ROOT / "deploy" / "kubernetes" / "mock.yaml"
NGINX_CONF = ROOT / "examples" / "compose" / "nginx.conf"
TOKEN = "platform-container-token"
AUTHORIZED = {"Authorization": f"Bearer {TOKEN}"}
KEY = {"X-API-Key": "dev-api-key"}
LINES = "/shop/api/v1/productlines/"
WAIT_S = 10  # each request through nginx: a replica answers in milliseconds


def mock_pod() -> tuple[dict[str, Any], dict[str, Any]]:
    """The mock's Deployment in the manifest: its pod spec and its one container."""
    deployment = next(
        document
        for document in yaml.safe_load_all(MANIFEST.read_text(encoding="utf-8"))
        if document["kind"] == "Deployment"
    )
    pod = deployment["spec"]["template"]["spec"]
    (mock,) = pod["containers"]
    return pod, mock


def environment(name: str) -> str:
    """The value the manifest gives the mock's variable `name`."""
    _, mock = mock_pod()
    return str(next(variable["value"] for variable in mock["env"] if variable["name"] == name))


def as_the_manifest_runs_it(pod_name: str, secrets: Path) -> list[str]:
    """`podman run` options doing what the manifest asks of the mock's pod, `pod_name` its name and
    `secrets` the folder its Secret would be (each key a file). Only the emptyDirs are writable."""
    pod, mock = mock_pod()
    user = pod["securityContext"]
    options = ["--user", f"{user['runAsUser']}:{user['runAsGroup']}"]
    for variable in mock["env"]:
        if "value" in variable:
            options += ["--env", f"{variable['name']}={variable['value']}"]
        else:  # the replica's name, from the pod's
            assert variable["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.name", variable
            options += ["--env", f"{variable['name']}={pod_name}"]
    security = mock["securityContext"]
    assert security == {
        "allowPrivilegeEscalation": False,
        "readOnlyRootFilesystem": True,
        "capabilities": {"drop": ["ALL"]},
    }, "the manifest asks for more than this test does: say it here too"
    options += ["--read-only", "--read-only-tmpfs=false", "--cap-drop", "ALL", "--security-opt", "no-new-privileges"]
    volumes = {volume["name"]: volume for volume in pod["volumes"]}
    for mount in mock["volumeMounts"]:
        volume = volumes[mount["name"]]
        if "emptyDir" in volume:
            options += ["--tmpfs", f"{mount['mountPath']}:rw,mode=1777"]
        else:
            assert "secret" in volume, volume
            options += ["--volume", f"{secrets}:{mount['mountPath']}:ro"]
    return options


@pytest.fixture(scope="module")
def secrets(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The admin token's Secret as a folder, its key a file the container's user may read."""
    folder = tmp_path_factory.mktemp("secret")
    token_file = folder / Path(environment("SHOP_MOCK_ADMIN_TOKEN_FILE")).name
    token_file.write_text(f"{TOKEN}\n", encoding="utf-8")
    folder.chmod(0o755)
    token_file.chmod(0o644)
    return folder


@pytest.fixture(scope="module")
def network() -> Iterator[str]:
    """A network with the manifest's Redis on it, under the name its `SHOP_MOCK_STATE` gives."""
    require_image()
    name = unique("shop-platform-net")
    podman("network", "create", name)
    redis_name = urlsplit(environment("SHOP_MOCK_STATE")).hostname or ""
    redis = ["redis-server", "--protected-mode", "no", "--save", "", "--appendonly", "no"]
    try:
        with container("--network", name, "--network-alias", redis_name, SERVICES_IMAGE, *redis) as redis_container:
            wait_for(
                lambda: podman("exec", redis_container, "redis-cli", "ping", check=False).stdout.strip() == "PONG",
                "Redis answering",
            )
            yield name
    finally:
        podman("network", "rm", "--force", name, check=False)


def healthy(name: str) -> bool:
    """Whether the image's health check passes in the container; AssertionError once it has stopped."""
    assert podman("inspect", "--format", "{{.State.Running}}", name).stdout.strip() == "true", "stopped"
    return podman("healthcheck", "run", name, check=False).returncode == 0


@contextmanager
def replica(network: str, secrets: Path, alias: str, *publish: str) -> Iterator[str]:
    """A mock as the manifest runs it, on `network` as `alias`, ready; its container's name."""
    name = unique("shop-platform-mock")
    options = as_the_manifest_runs_it(name, secrets)
    with container("--network", network, "--network-alias", alias, *publish, *options, IMAGE, name=name) as running:
        try:
            wait_for(lambda: healthy(running), "healthy", 90)
        except AssertionError as error:
            logs = podman("logs", running, check=False)
            pytest.fail(f"{alias}: {error}\n{logs.stdout[-3000:]}\n{logs.stderr[-3000:]}")
        yield running


@pytest.fixture(scope="module")
def published(network: str, secrets: Path) -> Iterator[tuple[str, str]]:
    """One replica published on loopback on another port than its own: its name and origin."""
    port = free_port()
    with replica(network, secrets, "shop-mock", "--publish", f"127.0.0.1:{port}:8000") as name:
        origin = f"http://127.0.0.1:{port}"
        wait_for(lambda: answers(f"{origin}/__mock__/readyz"), "the published mock ready")
        yield name, origin


def test_the_probes_answer_without_a_token_for_any_host_and_say_nothing_else(published: tuple[str, str]) -> None:
    _, origin = published
    for host in (origin.removeprefix("http://"), "10.244.1.7:8000", "shop-mock.default.svc.cluster.local"):
        live = httpx.get(f"{origin}/__mock__/livez", headers={"Host": host}, timeout=10)
        ready = httpx.get(f"{origin}/__mock__/readyz", headers={"Host": host}, timeout=10)
        assert (live.status_code, live.text, ready.status_code, ready.text) == (200, "up\n", 200, "ready\n"), host


def test_the_admin_api_and_the_dashboard_answer_through_another_port_with_the_token(
    published: tuple[str, str],
) -> None:
    _, origin = published
    with httpx.Client(base_url=origin, timeout=10) as client:
        health = client.get("/__mock__/health", headers=AUTHORIZED)
        assert health.status_code == 200, health.text
        assert client.get("/__mock__/requests", headers=AUTHORIZED).status_code == 200
        assert client.get("/__mock__/ui/").status_code == 200  # the page; its data comes through the admin API
        own = client.delete("/__mock__/faults", headers={**AUTHORIZED, "Origin": origin})
        assert own.status_code == 204, own.text
        named = client.get("/__mock__/health", headers={**AUTHORIZED, "Host": "shop-mock:8000"})  # --allowed-host
        assert named.status_code == 200, named.text
        scraped = client.get("/__mock__/metrics", headers=AUTHORIZED)
        assert scraped.status_code == 200
        assert "shop_mock_requests" in {family.name for family in text_string_to_metric_families(scraped.text)}


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({}, 401),
        ({"Authorization": "Bearer not-the-token"}, 401),
        ({**AUTHORIZED, "Origin": "http://evil.example"}, 403),
        ({**AUTHORIZED, "Origin": "http://127.0.0.1:8000"}, 403),  # the container's port is another origin
        ({**AUTHORIZED, "Host": "rebound.example"}, 403),  # a DNS name rebound to 127.0.0.1
    ],
)
def test_the_admin_api_refuses_without_the_token_from_another_origin_or_name(
    published: tuple[str, str], headers: dict[str, str], status: int
) -> None:
    _, origin = published
    with httpx.Client(base_url=origin, timeout=10) as client:
        for method, path in (("GET", "/__mock__/health"), ("DELETE", "/__mock__/faults"), ("GET", "/__mock__/metrics")):
            assert client.request(method, path, headers=headers).status_code == status, (method, path)
        if "Origin" in headers or "Host" in headers:
            assert client.get("/__mock__/ui/", headers=headers).status_code == 403


def test_the_root_filesystem_is_read_only_and_the_mock_writes_only_to_its_empty_dir(
    published: tuple[str, str],
) -> None:
    name, origin = published
    assert podman("inspect", "--format", "{{.HostConfig.ReadonlyRootfs}}", name).stdout.strip() == "true"
    refused = podman("exec", name, "python", "-c", "open('/home/shop/written', 'w')", check=False)
    assert refused.returncode != 0 and "Read-only file system" in refused.stderr, refused.stderr
    assert podman("exec", name, "test", "-s", environment("SHOP_MOCK_REALM_KEY"), check=False).returncode == 0
    line = {"productline": "Read-only Boats", "textdescription": "written to Redis, not to the image"}
    created = httpx.post(origin + LINES, json=line, headers=KEY, timeout=10)
    assert created.status_code == 201, created.text
    logs = podman("logs", name)
    events = [json.loads(text) for text in logs.stdout.splitlines() if text.strip()]  # SHOP_MOCK_LOG_FORMAT=json
    assert any(event.get("event") == "request" and event.get("status") == 201 for event in events), events[-5:]


def test_two_replicas_behind_nginx_keeping_the_host_the_same(network: str, secrets: Path, tmp_path: Path) -> None:
    """examples/compose/nginx.conf as it is (its upstreams are `mock-1` and `mock-2`), no Host rewrite."""
    conf = tmp_path / "nginx.conf"
    conf.write_text(NGINX_CONF.read_text(encoding="utf-8"), encoding="utf-8")
    conf.chmod(0o644)
    port = free_port()
    with ExitStack() as stack:
        names = {stack.enter_context(replica(network, secrets, alias)) for alias in ("mock-1", "mock-2")}
        mounted = f"{conf}:/etc/nginx/nginx.conf:ro"
        nginx = ("--network", network, "--publish", f"127.0.0.1:{port}:8080", "--volume", mounted, SERVICES_IMAGE)
        proxy = stack.enter_context(container(*nginx, "nginx", "-g", "daemon off;"))
        try:
            through_nginx(f"http://127.0.0.1:{port}", names)
        except httpx.TimeoutException as error:
            pytest.fail(f"{error.request.url}: no answer through nginx in {WAIT_S} s\n{logs_of(proxy, *sorted(names))}")
        except (AssertionError, httpx.HTTPError) as error:
            pytest.fail(f"{error!r}\n{logs_of(proxy, *sorted(names))}")


def through_nginx(origin: str, replicas: set[str]) -> None:
    """Both `replicas` answer the admin API and the dashboard through nginx with the token, and refuse
    it without the token, from another origin and for another name; the probes answer."""
    wait_for(lambda: answers(f"{origin}/__mock__/readyz"), "nginx and a replica ready")
    with httpx.Client(base_url=origin, timeout=WAIT_S) as client:
        answered = set()
        for _ in range(6):  # round-robin: both replicas answer the admin API through nginx
            health = client.get("/__mock__/health", headers=AUTHORIZED)
            assert health.status_code == 200, health.text
            answered.add(health.json()["replica"])
        assert answered == replicas
        for _ in range(2):  # each replica: the dashboard's page, and its data with the token from its own origin
            assert client.get("/__mock__/ui/").status_code == 200
            own = client.get("/__mock__/ui/operations", headers={**AUTHORIZED, "Origin": origin})
            assert own.status_code == 200, own.text
        assert client.get("/__mock__/livez", headers={"Host": "10.244.1.7:8000"}).text == "up\n"
        for _ in range(2):  # each replica refuses alike
            assert client.get("/__mock__/health").status_code == 401
            assert client.get("/__mock__/ui/operations").status_code == 401
            foreign = {**AUTHORIZED, "Origin": "http://evil.example"}
            assert client.delete("/__mock__/faults", headers=foreign).status_code == 403
            assert client.get("/__mock__/ui/operations", headers=foreign).status_code == 403
            rebound = client.get("/__mock__/health", headers={**AUTHORIZED, "Host": "rebound.example"})
            assert rebound.status_code == 403


def logs_of(*names: str) -> str:
    """The last lines each container wrote, for a failure's message."""
    parts = []
    for name in names:
        logs = podman("logs", "--tail", "30", name, check=False)
        parts.append(f"--- {name}\n{logs.stdout}{logs.stderr}")
    return "\n".join(parts)


def test_two_workers_in_a_read_only_container_are_counted_exactly(network: str, secrets: Path) -> None:
    """`--workers 2` as the manifest runs the mock (read-only, /tmp its only writable place, where the
    workers keep their metrics): both workers serve, and a scrape counts exactly the requests sent."""
    port = free_port()
    workers = ("--env", "SHOP_MOCK_WORKERS=2", "--publish", f"127.0.0.1:{port}:8000")
    with replica(network, secrets, "shop-mock-workers", *workers):
        origin = f"http://127.0.0.1:{port}"
        served_by = set()
        for _ in range(20):  # each on a connection of its own, so that both workers take some
            answer = httpx.get(origin + LINES, headers=KEY, timeout=WAIT_S)
            assert answer.status_code == 200, answer.text
            served_by.add(httpx.get(f"{origin}/__mock__/health", headers=AUTHORIZED, timeout=WAIT_S).json()["replica"])
        assert len(served_by) == 2, f"one worker answered everything: the test would not show the sum ({served_by})"
        wait_for(lambda: lines_counted(origin) == 20, "the 20 requests counted", 10)


def lines_counted(origin: str) -> float:
    """The requests of the product lines' list answered 200, in a scrape of `origin`."""
    scraped = httpx.get(f"{origin}/__mock__/metrics", headers=AUTHORIZED, timeout=WAIT_S)
    assert scraped.status_code == 200, scraped.text
    return sum(
        sample.value
        for family in text_string_to_metric_families(scraped.text)
        for sample in family.samples
        if sample.name == "shop_mock_requests_total"
        and sample.labels == {"operation": "list_product_lines", "status": "200"}
    )
