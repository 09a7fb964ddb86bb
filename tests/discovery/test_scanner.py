"""Reading one descriptor file: bounded, never blocking, only regular files."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from aai_gateway.descriptor.limits import MAX_DESCRIPTOR_BYTES
from aai_gateway.discovery.scanner import read_descriptor_bytes


def test_a_descriptor_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "aai.json"
    path.write_bytes(b'{"schemaVersion": "1.0"}')
    assert read_descriptor_bytes(path) == b'{"schemaVersion": "1.0"}'
    assert read_descriptor_bytes(str(path)) == b'{"schemaVersion": "1.0"}'


def test_an_empty_file_reads_as_nothing(tmp_path: Path) -> None:
    path = tmp_path / "aai.json"
    path.write_bytes(b"")
    assert read_descriptor_bytes(path) == b""


def test_a_file_over_the_limit_is_read_to_one_byte_past_it(tmp_path: Path) -> None:
    path = tmp_path / "aai.json"
    path.write_bytes(b" " * (MAX_DESCRIPTOR_BYTES + 100))
    assert len(read_descriptor_bytes(path)) == MAX_DESCRIPTOR_BYTES + 1


@pytest.mark.skipif(sys.platform == "win32", reason="FIFOs")
def test_a_fifo_where_a_file_was_found_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "aai.json"
    os.mkfifo(fifo)  # a blocking open would wait here forever
    with pytest.raises(OSError, match="not a regular file"):
        read_descriptor_bytes(fifo)


def test_a_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(OSError):
        read_descriptor_bytes(tmp_path)
