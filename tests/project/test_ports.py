"""The ports the tests' servers get (tests/support/ports.py): outside the kernel's ephemeral range,
bindable, and never the same for two test processes at once."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support import ports
from tests.support.suite import ROOT

ASK = """
import random, sys
from pathlib import Path
random.seed(1)  # Every child starts its walk at the same port.
from tests.support import ports
ports.CLAIMS = Path(sys.argv[1])
print(*(ports.free_port() for _ in range(150)))
"""


@pytest.fixture
def claims(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(ports, "CLAIMS", tmp_path)
    return tmp_path


def test_ports_come_from_below_the_ephemeral_range_and_are_bindable_and_distinct(claims: Path) -> None:
    low = int(ports.EPHEMERAL.read_text().split()[0])
    given = [ports.free_port() for _ in range(200)]
    assert len(set(given)) == 200
    assert all(ports.FIRST <= port < low for port in given)
    assert all(ports.bindable(port) for port in given)
    assert sorted(path.name for path in claims.iterdir()) == sorted(str(port) for port in given)


def test_two_processes_starting_at_the_same_port_never_get_the_same_one(claims: Path) -> None:
    command = [sys.executable, "-c", ASK, str(claims)]
    children = [subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True) for _ in range(2)]
    answers = [child.communicate(timeout=60)[0].split() for child in children]
    assert [len(answer) for answer in answers] == [150, 150]
    assert not set(answers[0]) & set(answers[1])


def test_a_port_bound_or_freshly_claimed_is_skipped_and_a_stale_claim_is_taken(
    claims: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = ports.FIRST + 7
    (claims / str(first)).touch()
    (claims / str(first + 1)).touch()
    stale = time.time() - ports.CLAIM_S - 1
    os.utime(claims / str(first + 1), (stale, stale))
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        bound = held.getsockname()[1]
        monkeypatch.setattr(ports, "_PORTS", iter([bound, first, first + 1, first + 2, first]))
        assert ports.free_port() == first + 1  # `bound` is bound, `first` claimed now, `first + 1` too long ago
        assert ports.free_port() == first + 2
        with pytest.raises(RuntimeError, match="no free loopback port"):
            ports.free_port()  # the walk is at its end: `first` is still claimed
