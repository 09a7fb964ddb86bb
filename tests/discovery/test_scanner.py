"""Reading one descriptor file: bounded, never blocking in discovery, only regular files there;
any readable stream when the user names it."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import pytest

from aai_gateway.descriptor.limits import MAX_DESCRIPTOR_BYTES
from aai_gateway.discovery.scanner import read_descriptor_bytes, root_status, walk_source
from aai_gateway.discovery.sources import Pattern, SourceSpec

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="FIFOs and /dev/fd")


def written(folder: Path, content: bytes) -> Path:
    path = folder / "aai.json"
    path.write_bytes(content)
    return path


def test_a_descriptor_is_read_whole(tmp_path: Path) -> None:
    path = written(tmp_path, b'{"schemaVersion": "1.0"}')
    assert read_descriptor_bytes(path) == b'{"schemaVersion": "1.0"}'
    assert read_descriptor_bytes(str(path)) == b'{"schemaVersion": "1.0"}'


def test_an_empty_file_reads_as_nothing(tmp_path: Path) -> None:
    path = written(tmp_path, b"")
    assert read_descriptor_bytes(path) == b""


def test_a_file_over_the_limit_is_read_to_one_byte_past_it(tmp_path: Path) -> None:
    path = written(tmp_path, b" " * (MAX_DESCRIPTOR_BYTES + 100))
    assert len(read_descriptor_bytes(path)) == MAX_DESCRIPTOR_BYTES + 1


def test_a_file_that_grew_after_its_size_was_asked_is_read_to_its_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = written(tmp_path, b"x" * 200_000)
    real = os.fstat

    def said_smaller(fd: int) -> os.stat_result:
        info = real(fd)
        return os.stat_result((info.st_mode, *tuple(info)[1:6], 10, *tuple(info)[7:10]))

    monkeypatch.setattr(os, "fstat", said_smaller)
    assert read_descriptor_bytes(path) == b"x" * 200_000


def test_short_reads_are_not_taken_for_the_end_of_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A network or FUSE file system may answer a read with less than it has."""
    path = written(tmp_path, b"y" * 50_000)
    real = os.read
    monkeypatch.setattr(os, "read", lambda fd, size: real(fd, min(size, 999)))
    assert read_descriptor_bytes(path) == b"y" * 50_000


@posix_only
def test_a_fifo_where_a_file_was_found_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "aai.json"
    os.mkfifo(fifo)  # a blocking open would wait here forever
    failures: list[BaseException] = []

    def read() -> None:
        try:
            read_descriptor_bytes(fifo)
        except OSError as exc:
            failures.append(exc)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout=10)
    assert not reader.is_alive(), "reading a FIFO waited for a writer"
    assert len(failures) == 1 and "not a regular file" in str(failures[0])


def test_a_directory_is_refused_as_no_regular_file(tmp_path: Path) -> None:
    with pytest.raises(OSError, match="not a regular file"):
        read_descriptor_bytes(tmp_path)


@posix_only
def test_a_stream_the_user_names_is_read_whole(tmp_path: Path) -> None:
    """`aai-gateway validate /dev/stdin`, or `diff <(git show HEAD~:aai.json) aai.json`."""
    reading, writing = os.pipe()
    try:
        os.write(writing, b'{"schemaVersion": "1.0"}')
        os.close(writing)
        with pytest.raises(OSError, match="not a regular file"):
            read_descriptor_bytes(f"/dev/fd/{reading}")  # discovery reads regular files only
        assert read_descriptor_bytes(f"/dev/fd/{reading}", named_by_user=True) == b'{"schemaVersion": "1.0"}'
    finally:
        os.close(reading)


@posix_only
def test_a_root_through_a_link_and_dot_dot_is_checked_where_it_is_walked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`link/../apps` names `apps` here, as every binding reads it, not the parent of the link's
    target: the root's check and the walk see the same folder."""
    here, elsewhere = tmp_path / "here", tmp_path / "elsewhere"
    (here / "apps" / "notes").mkdir(parents=True)
    written(here / "apps" / "notes", b"{}")
    (elsewhere / "deep").mkdir(parents=True)  # `link/..` by the OS: `elsewhere`, which has no apps
    (here / "link").symlink_to(elsewhere / "deep")
    monkeypatch.chdir(here)
    spec = SourceSpec("--path", Path("link/../apps"), Pattern.FILES_AND_APP_DIRS, explicit=True)
    assert root_status(spec).exists
    assert [item.path for item in walk_source(spec)] == [str(here / "apps" / "notes" / "aai.json")]
