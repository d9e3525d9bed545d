"""The contract document: where the bundled copy is, reading a spec, and inlining its `$ref`s.

The mock and the suite both load the spec through here, so both read the same bytes the same way and
fail the same way (one `SpecError` line) on a file that is missing, not YAML or not OpenAPI 3.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

from shop_contract.files import read_at_most

SPEC_PACKAGE = "shop_contract.openapi"
SPEC_FILE = "openapi.yaml"
FIXTURES_PACKAGE = "shop_contract.fixtures"

Document = dict[str, Any]
MAX_SPEC_BYTES = 16 * 1024 * 1024
"""The largest spec read (the bundled one is about 80 KB): more is no contract but a mistake, /dev/zero say."""
MAX_SPEC_VALUES = 1_000_000
"""Values in a spec once each YAML alias is a copy (the bundled one: about 4,500). Aliases of aliases
(a "billion laughs") read in a millisecond and expand past any memory where the spec is copied or walked."""


class SpecError(Exception):
    """The contract cannot be read or lacks what its reader derives from it."""


def installed_folder(package: str) -> Path:
    """The folder of a data package on the file system (wheels and editable installs both unpack)."""
    folder = resources.files(package)
    if not isinstance(folder, Path):  # e.g. imported from a zip: the mock needs real files
        raise SpecError(f"{package} is not installed as files on disk ({folder})")
    return folder


def bundled_spec() -> Path:
    """The spec shipped with the package."""
    return installed_folder(SPEC_PACKAGE) / SPEC_FILE


def bundled_fixtures() -> Path:
    """The default seed data shipped with the package."""
    return installed_folder(FIXTURES_PACKAGE)


def read(path: Path | None = None) -> Document:
    """The spec at `path` (default: the bundled one), as written, `$ref`s kept."""
    import yaml  # here, not at the top: the pytest plugin's options import this module in every session

    path = bundled_spec() if path is None else path
    # libyaml's parser where PyYAML's wheel has it: the same safe loading, ten times faster (0.14 s to 0.01 s for
    # the bundled spec, read by every run of the suite and every start of the mock).
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        document = yaml.load(read_at_most(path, MAX_SPEC_BYTES).decode("utf-8"), Loader=loader)
        if _expanded_size(document, {}) > MAX_SPEC_VALUES:
            raise SpecError(
                f"cannot read the spec {path}: its YAML aliases expand to more than {MAX_SPEC_VALUES} values"
            )
    except yaml.YAMLError as exc:
        if "maximum nesting depth" in str(exc):  # libyaml's bound (PyYAML's own recurses: below)
            raise SpecError(f"cannot read the spec {path}: nested too deeply") from None
        reason = str(exc).replace("\n", " ")
        raise SpecError(f"cannot read the spec {path}: {reason}") from exc
    except OSError as exc:
        raise SpecError(f"cannot read the spec {path}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise SpecError(f"cannot read the spec {path}: {exc}") from exc
    except RecursionError:  # PyYAML's pure-Python loader composes nested collections recursively, as we walk them
        raise SpecError(f"cannot read the spec {path}: nested too deeply") from None
    if not isinstance(document, dict) or not str(document.get("openapi", "")).startswith("3."):
        raise SpecError(f"{path} is not an OpenAPI 3 document")
    return document


def _expanded_size(node: Any, sizes: dict[int, int]) -> int:
    """The values `node` holds with each alias a copy. A node that aliases share is walked once (`sizes`, by
    id), so a billion laughs is counted in the time its few nodes take."""
    if not isinstance(node, dict | list):
        return 1
    size = sizes.get(id(node))
    if size is None:
        children = node.values() if isinstance(node, dict) else node
        size = sizes[id(node)] = 1 + sum(_expanded_size(child, sizes) for child in children)
    return size


def dereference(node: Any, document: Document) -> Any:
    """A copy of `node` with every local `$ref` inlined (the spec has no recursive schemas)."""
    if isinstance(node, dict):
        if "$ref" in node:
            return dereference(target(node["$ref"], document), document)
        return {key: dereference(value, document) for key, value in node.items()}
    if isinstance(node, list):
        return [dereference(item, document) for item in node]
    return node


def target(ref: str, document: Document) -> Any:
    """What a local `$ref` (`#/components/...`) points to."""
    found: Any = document
    try:
        for part in ref.removeprefix("#/").split("/"):
            found = found[part.replace("~1", "/").replace("~0", "~")]
    except (KeyError, TypeError, IndexError) as exc:
        raise SpecError(f"the spec's $ref {ref!r} points to nothing") from exc
    return found


def digest(document: Document) -> str:
    """`sha256:` over the document's parsed content in canonical JSON: a checkout's line endings or YAML
    layout do not change it, any change of content does (a consumer contract names the spec it met so)."""
    import hashlib
    import json

    canonical = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()
