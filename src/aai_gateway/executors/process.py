"""The one way the gateway runs a program: stdio adapters, osascript, adb, xcrun, consent dialogs.

`run_program` starts the child in a process group of its own with the environment its caller
built (usually `programs.child_environment`: an allow-list of the gateway's variables plus the
descriptor's), writes its stdin, reads stdout up to a limit and the end of stderr, and stops the
whole group (SIGTERM, a grace period, then SIGKILL; Windows: CTRL_BREAK, then `taskkill /T /F`)
when the time is up, the output is too large, the caller is cancelled, or the child has exited
(whatever it left running in the background goes too). The exit status is the child's own: the
group is signalled with `os.killpg`/`os.kill`, never `Popen.send_signal` (see `_signal`). ACP
agents, which outlive a call, use the same spawning and stopping (`spawn_options`,
`stop_process_tree`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import anyio.abc

STDERR_KEPT_BYTES = 64 * 1024
"""How much of the end of a child's stderr is kept for error messages."""
_POLL_SECONDS = 0.02
_LINUX = sys.platform.startswith("linux")

logger = logging.getLogger(__name__)


def spawn_options() -> dict[str, Any]:
    """Keyword arguments for `anyio.open_process` that give the child its own process group."""
    if sys.platform == "win32":
        return {"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP}
    return {"start_new_session": True}


async def read_bounded(stream: anyio.abc.ByteReceiveStream, into: bytearray, limit: int) -> bool:
    """Append `stream` to `into` until end of stream; False as soon as more than `limit` bytes came."""
    while True:
        try:
            chunk = await stream.receive(65536)
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            return True
        into += chunk
        if len(into) > limit:
            return False


async def read_tail(stream: anyio.abc.ByteReceiveStream, into: bytearray, keep: int) -> None:
    """Read `stream` to its end, keeping only its last `keep` bytes in `into`."""
    while True:
        try:
            chunk = await stream.receive(65536)
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            return
        into += chunk
        if len(into) > keep:
            del into[: len(into) - keep]


async def write_and_close(stream: anyio.abc.ByteSendStream, data: bytes) -> None:
    """Write `data` and close; a child that exits without reading its stdin is not an error here."""
    with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
        await stream.send(data)
    with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
        await stream.aclose()


def describe_exit(returncode: int) -> str:
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"was killed by {name}"
    if returncode > 0xFFFF:  # Windows NTSTATUS codes read better in hex
        return f"exited with code {returncode} (0x{returncode:08X})"
    return f"exited with code {returncode}"


@dataclass(frozen=True)
class ProgramRun:
    """How one run of a program went."""

    returncode: int | None
    """The child's exit status; None when the gateway stopped it before it exited."""
    stdout: bytes
    stderr: bytes
    """The last `keep_stderr` bytes."""
    timed_out: bool = False
    output_too_large: bool = False
    """It wrote more than `max_stdout` bytes to stdout and was stopped."""

    @property
    def stdout_text(self) -> str:
        return self.stdout.decode("utf-8", "replace")

    @property
    def stderr_text(self) -> str:
        return self.stderr.decode("utf-8", "replace")


async def run_program(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    max_stdout: int,
    grace: float,
    cwd: Path | None = None,
    stdin: bytes | None = None,
    # its own deadline, not the caller's cancel scope: what the child wrote until then comes back
    timeout: float | None = None,  # noqa: ASYNC109
    keep_stderr: int = STDERR_KEPT_BYTES,
    drain: float = 1.0,
    log_as: str | None = None,
) -> ProgramRun:
    """Run `argv` (argv[0] a path `find_program` found) to its end, and stop its whole group.

    `env` is the child's whole environment. `stdin`: written, then closed (None: no stdin).
    `timeout`: seconds until the child is stopped (`timed_out`); a caller's cancel scope stops
    it too, and the cancellation goes on. `drain`: once the child has exited, how long to wait
    for its output to end (something it started in the background may hold the pipes open).
    `keep_stderr=0` discards stderr. `log_as`: what debug logs call the run (never parameter
    values; default: the program's path). Starting it fails with OSError or ValueError.
    """
    name = log_as or argv[0]
    stdout, stderr = bytearray(), bytearray()
    returncode: int | None = None
    too_large = False
    with anyio.CancelScope(shield=True):  # once started, the process must be ours to stop
        process = await anyio.open_process(
            list(argv),
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE if keep_stderr else subprocess.DEVNULL,
            cwd=cwd,
            env=dict(env),
            **spawn_options(),
        )
    started = anyio.current_time()
    logger.debug("%s: started pid %d (cwd %s)", name, process.pid, cwd)
    try:
        with anyio.move_on_after(timeout) as clock:
            async with anyio.create_task_group() as tasks:
                stdout_done, stderr_done = anyio.Event(), anyio.Event()

                async def read_stdout(stream: anyio.abc.ByteReceiveStream) -> None:
                    nonlocal too_large
                    if not await read_bounded(stream, stdout, max_stdout):
                        too_large = True
                        tasks.cancel_scope.cancel()
                    stdout_done.set()

                async def read_stderr(stream: anyio.abc.ByteReceiveStream) -> None:
                    await read_tail(stream, stderr, keep_stderr)
                    stderr_done.set()

                if process.stdin is not None and stdin is not None:
                    tasks.start_soon(write_and_close, process.stdin, stdin)
                assert process.stdout is not None
                tasks.start_soon(read_stdout, process.stdout)
                if process.stderr is not None:
                    tasks.start_soon(read_stderr, process.stderr)
                else:
                    stderr_done.set()
                returncode = await process.wait()
                with anyio.move_on_after(drain):
                    await stdout_done.wait()
                    await stderr_done.wait()
                tasks.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            await stop_process_tree(process, grace)
            with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
                await process.aclose()
        logger.debug(
            "%s: pid %d %s after %.3f s%s",
            name,
            process.pid,
            describe_exit(process.returncode) if process.returncode is not None else "ended",
            anyio.current_time() - started,
            "" if returncode is not None else " (stopped by the gateway)",
        )
    return ProgramRun(
        returncode,
        bytes(stdout),
        bytes(stderr),
        timed_out=clock.cancelled_caught and returncode is None and not too_large,
        output_too_large=too_large,
    )


async def stop_process_tree(process: anyio.abc.Process, grace: float) -> None:
    """Stop the child and everything in its process group, then reap the child.

    POSIX: SIGTERM to the group, up to `grace` seconds for the leader and the rest of the group
    to go, then SIGKILL to whatever is left. Also sweeps up members left behind by a leader that
    already exited. Call it shielded from cancellation.
    """
    if sys.platform == "win32":
        await _stop_windows(process, grace)
        return
    pgid = process.pid  # start_new_session=True made the child the leader of its own group
    if process.returncode is None or group_alive(pgid):
        _signal(process, pgid, signal.SIGTERM)
        with anyio.move_on_after(grace):
            await process.wait()
            while group_alive(pgid):  # noqa: ASYNC110 (nothing to wait on but the group's state)
                await anyio.sleep(_POLL_SECONDS)
        if process.returncode is None or group_alive(pgid):
            _signal(process, pgid, signal.SIGKILL)
    await process.wait()


def group_alive(pgid: int) -> bool:
    """Whether the process group still has a member that is not a zombie (POSIX only)."""
    if sys.platform == "win32":
        return False
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # only members we could not signal anyway
        return False
    if _LINUX:
        # Where PID 1 does not reap orphans (containers), dead members linger as zombies and
        # killpg(…, 0) still succeeds: look at their state instead of waiting out the grace.
        return _linux_group_has_live_member(pgid)
    return True


def _linux_group_has_live_member(pgid: int) -> bool:
    try:
        entries = os.scandir("/proc")
    except OSError:
        return True
    with entries:
        for entry in entries:
            if not entry.name.isdigit():
                continue
            try:
                with open(f"/proc/{entry.name}/stat", "rb") as handle:
                    stat = handle.read()
            except OSError:
                continue
            # pid (comm) state ppid pgrp ...; comm may contain spaces and parentheses
            fields = stat[stat.rfind(b")") + 2 :].split()
            if len(fields) >= 3 and int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
                return True
    return False


def _signal(process: anyio.abc.Process, pgid: int, signum: signal.Signals) -> None:
    """`signum` to the group and, should the group be gone or never have been made, the leader."""
    if sys.platform != "win32":
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signum)
        if process.returncode is None:
            # os.kill, never process.send_signal(): before Python 3.13 that polls the child
            # (waitpid WNOHANG) and can reap it under asyncio's child watcher, whose exit status
            # is then lost (reported as 255; CPython gh-87744).
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(process.pid, signum)


async def _stop_windows(process: anyio.abc.Process, grace: float) -> None:
    if sys.platform == "win32":
        if process.returncode is None:
            with contextlib.suppress(OSError):
                os.kill(process.pid, signal.CTRL_BREAK_EVENT)
            with anyio.move_on_after(grace):
                await process.wait()
        if process.returncode is None:
            with contextlib.suppress(OSError):  # the whole tree, while its root still exists
                await anyio.run_process(
                    ["taskkill", "/T", "/F", "/PID", str(process.pid)],
                    check=False,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            with contextlib.suppress(OSError):
                process.kill()
        await process.wait()
