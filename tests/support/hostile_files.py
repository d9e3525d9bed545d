"""Files that would exhaust their reader (shop_contract/files.py and document.py bound them): a spec's
aliases of aliases, and a file far larger than any spec, realm, key or token."""

from __future__ import annotations

from pathlib import Path

from shop_contract.document import bundled_spec


def laughs(levels: int) -> str:
    """A YAML "billion laughs": nine aliases of the level below at each level, 9**levels values in all,
    as extensions after the bundled spec, which stays a valid OpenAPI document."""
    lines = ['x-level0: &level0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for level in range(1, levels + 1):
        lines.append(f"x-level{level}: &level{level} [{', '.join([f'*level{level - 1}'] * 9)}]")
    return bundled_spec().read_text(encoding="utf-8") + "\n" + "\n".join(lines) + "\n"


def sparse(path: Path, size: int) -> Path:
    """`path`, `size` zero bytes that take no disk."""
    with path.open("wb") as file:
        file.truncate(size)
    return path
