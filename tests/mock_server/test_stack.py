"""The mock's middleware as `mock_server.stack` orders them: ARCHITECTURE.md lists the same layers
in the same order, and the bypass wraps exactly the control layers."""

from __future__ import annotations

import re
from pathlib import Path

from mock_server.app import create_app
from mock_server.backends import Control
from mock_server.control.bypass import Bypass
from mock_server.control.observe import Observe
from mock_server.control.steering import Steering
from mock_server.http.middleware import LastResort
from mock_server.settings import Settings
from mock_server.stack import with_bypass

ARCHITECTURE = Path(__file__).resolve().parents[2] / "ARCHITECTURE.md"
LISTED = re.compile(r"^\d+\. `([\w/]+)\.(\w+)`", re.MULTILINE)
EVERY_LAYER = Settings(proxy="http://127.0.0.1:9")  # the proxy's layer too; nothing is sent to it


def listed_layers(text: str) -> list[str]:
    """The numbered list of layers as dotted names: `control/proxy.Proxy` is `mock_server.control.proxy.Proxy`."""
    return [f"mock_server.{path.replace('/', '.')}.{name}" for path, name in LISTED.findall(text)]


def test_the_architecture_lists_the_layers_in_their_order() -> None:
    layers = create_app(EVERY_LAYER).layers
    assert listed_layers(ARCHITECTURE.read_text(encoding="utf-8")) == [
        f"{entry.cls.__module__}.{entry.cls.__name__}" for entry in layers
    ]


def test_the_listed_layers_are_read_as_such() -> None:
    text = "1. `http/cors.CORS`: its headers.\n2. `control/proxy.Proxy` (with `--proxy`)\nnot `a/b.C`\n"
    assert listed_layers(text) == ["mock_server.http.cors.CORS", "mock_server.control.proxy.Proxy"]


def test_the_bypass_wraps_the_layers_from_last_resort_up_to_steering_and_the_observer_stays_outside() -> None:
    app = create_app(Settings())
    control = Control(app.journal, app.faults, app.violations, ())
    rejoin = [entry.cls for entry in app.layers].index(Steering) + 1
    observer, bypass, *rest = with_bypass(app.layers, control)
    assert observer.cls is Observe and app.layers[1].cls is LastResort
    assert bypass.cls is Bypass
    assert bypass.kwargs["control"] == app.layers[1:rejoin]
    assert rest == app.layers[rejoin:]


def test_with_the_proxy_there_is_no_bypass() -> None:
    app = create_app(EVERY_LAYER)
    assert with_bypass(app.layers, Control(app.journal, app.faults, app.violations, ())) == app.layers
