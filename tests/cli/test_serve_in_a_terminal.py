"""`aai-gateway` started by hand in a terminal says, once, on stderr, what it is and how to try it;
started by an MCP client (stdin a pipe) it says nothing of the kind."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

from aai_gateway.cli.serve import TERMINAL_HINT

GATEWAY = [sys.executable, "-m", "aai_gateway", "--no-default-paths"]


def read_until(fd: int, wanted: bytes, seconds: float = 20.0) -> bytes:
    seen = b""
    deadline = time.monotonic() + seconds
    while wanted not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
    return seen


def test_started_by_hand_in_a_terminal_it_says_it_waits_for_an_mcp_client(tmp_path: Path) -> None:
    leader, follower = pty.openpty()
    process = subprocess.Popen(GATEWAY, stdin=follower, stdout=subprocess.PIPE, stderr=follower, cwd=tmp_path)
    os.close(follower)
    try:
        shown = read_until(leader, b"./scripts/demo").decode("utf-8", "replace").replace("\r\n", "\n")
    finally:
        process.terminate()
        process.wait(timeout=20)
        os.close(leader)
    first_line = TERMINAL_HINT.splitlines()[0]
    assert shown.count(first_line) == 1, shown
    assert "./scripts/demo" in shown
    assert process.stdout is not None and process.stdout.read() == b""  # stdout stays the protocol's


def test_started_by_a_client_on_a_pipe_it_says_nothing_of_the_kind(tmp_path: Path) -> None:
    done = subprocess.run(GATEWAY, input=b"", capture_output=True, cwd=tmp_path, timeout=30, check=True)
    assert TERMINAL_HINT.splitlines()[0].encode() not in done.stderr
    assert done.stdout == b""
