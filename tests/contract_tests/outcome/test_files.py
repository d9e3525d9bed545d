"""outcome/files.py: a report replaces a regular file at once, and never puts a plain file in the place of a
link, a device or a pipe (`--junit-xml /dev/stdout`, run as root in a CI container, replaced /dev/stdout)."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from contract_tests.outcome import files


def test_a_regular_file_is_replaced_and_keeps_its_permissions(tmp_path: Path) -> None:
    path = tmp_path / "junit.xml"
    path.write_bytes(b"old")
    path.chmod(0o640)
    files.write(path, b"new")
    assert path.read_bytes() == b"new"
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["junit.xml"]  # no temporary left


def test_a_link_stays_and_the_file_it_names_is_replaced(tmp_path: Path) -> None:
    target = tmp_path / "reports" / "junit.xml"
    target.parent.mkdir()
    target.write_bytes(b"old")
    link = tmp_path / "latest.xml"
    link.symlink_to(target)
    files.write(link, b"new")
    assert link.is_symlink() and link.resolve() == target.resolve()
    assert target.read_bytes() == b"new"


@pytest.mark.parametrize("through_a_link", [False, True])
def test_a_pipe_is_written_into_and_stays_a_pipe(tmp_path: Path, through_a_link: bool) -> None:
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    path = pipe
    if through_a_link:
        path = tmp_path / "stdout"
        path.symlink_to(pipe)
    data = b"<testsuite/>" * 20_000  # more than a pipe's buffer: written whole, as the reader reads
    read: list[bytes] = []
    reader = threading.Thread(target=lambda: read.append(pipe.read_bytes()), daemon=True)
    reader.start()
    files.write(path, data)
    reader.join(timeout=10)
    assert read == [data]
    assert stat.S_ISFIFO(os.stat(pipe).st_mode)
    assert path.is_symlink() == through_a_link


def test_a_directory_is_an_error_and_nothing_is_written(tmp_path: Path) -> None:
    folder = tmp_path / "junit.xml"
    folder.mkdir()
    with pytest.raises(IsADirectoryError):
        files.write(folder, b"x")
    assert list(tmp_path.iterdir()) == [folder] and list(folder.iterdir()) == []
