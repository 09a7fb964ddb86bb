"""Run a short-lived helper program (adb, xcrun, open, pbpaste) and capture its output.

Shared by the mobile executors. The child gets the allow-listed environment of `process.py`,
its own process group, bounded output, and is stopped with its whole group when the caller's
deadline (an enclosing cancel scope) expires.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from subprocess import DEVNULL, PIPE

import anyio

from . import process as proc

OUTPUT_LIMIT = 4 * 1024 * 1024
"""Bytes of stdout a helper may print before it is stopped (a result, not a data dump)."""
KILL_GRACE_SECONDS = 1.0


@dataclass(frozen=True)
class Captured:
    returncode: int
    stdout: str
    stderr: str
    truncated: bool = False


async def run_captured(
    argv: Sequence[str], environ: Mapping[str, str], *, passed: Sequence[str] = (), limit: int = OUTPUT_LIMIT
) -> Captured:
    """Run `argv` to completion; cancelling the caller stops the child's whole process group.
    `passed`: variables of `environ` the helper needs besides the minimal environment (which
    adb server, which Xcode)."""
    out = bytearray()
    err = bytearray()
    complete = True
    with anyio.CancelScope(shield=True):  # once started, the process must be ours to stop
        process = await anyio.open_process(
            list(argv),
            stdin=DEVNULL,
            stdout=PIPE,
            stderr=PIPE,
            env=proc.child_environment(environ, {name: environ[name] for name in passed if name in environ}),
            **proc.spawn_options(),
        )
    try:
        assert process.stdout is not None and process.stderr is not None
        async with anyio.create_task_group() as group:
            group.start_soon(proc.read_tail, process.stderr, err, 64 * 1024)
            complete = await proc.read_bounded(process.stdout, out, limit)
            if not complete:
                group.cancel_scope.cancel()
        if complete:
            await process.wait()
    finally:
        with anyio.CancelScope(shield=True):
            if process.returncode is None or not complete:
                await proc.stop_process_tree(process, KILL_GRACE_SECONDS)
            with contextlib.suppress(Exception):
                await process.aclose()
    return Captured(
        process.returncode if process.returncode is not None else -1,
        out.decode("utf-8", "replace"),
        err.decode("utf-8", "replace"),
        truncated=not complete,
    )
