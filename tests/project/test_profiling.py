"""The test run's profiler (tests/support/profiling.py): a test's wall and CPU time reach the summary,
also from xdist workers, and a test that waits is told apart from one that computes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

SAMPLE = """
import time

def test_waits():
    time.sleep(0.6)

def test_computes():
    end = time.process_time() + 0.6
    while time.process_time() < end:
        pass
"""


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["in-process", "xdist"])
def test_each_tests_wall_and_cpu_time_reach_the_profile(tmp_path: Path, workers: list[str]) -> None:
    (tmp_path / "test_sample.py").write_text(SAMPLE)
    out = tmp_path / "profile.json"
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "tests.support.profiling"]
    command += [*workers, "--profile-json", str(out), "test_sample.py"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "slowest 30 tests" in result.stdout and "per directory" in result.stdout
    profile = json.loads(out.read_text())
    tests = {row["name"].split("::")[-1]: row for row in profile["tests"]}
    assert tests["test_waits"]["wall"] >= 0.6 and tests["test_waits"]["cpu"] < 0.3
    assert tests["test_computes"]["cpu"] >= 0.55
    [file] = profile["files"]
    assert file["name"] == "test_sample.py" and file["tests"] == 2
