"""Child-process plumbing shared by executors that start local programs (stdio adapters).

What lives here: the minimal environment a child gets, finding the program to run, starting it
in a process group of its own, reading its output without unbounded buffering, and stopping the
whole group (SIGTERM, a grace period, then SIGKILL; Windows: CTRL_BREAK, then `taskkill /T /F`).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
import anyio.abc

PASSED_ENVIRONMENT: tuple[str, ...] = (
    "PATH",
    "HOME",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "LC_MESSAGES",
    "TMPDIR",
    "TZ",
    "USER",
    "LOGNAME",
    # Where the user keeps data and settings: directory names, not secrets, and adapters that
    # store files must agree with the rest of the desktop about them.
    "XDG_DATA_HOME",
    "XDG_CONFIG_HOME",
    "XDG_CACHE_HOME",
    "XDG_STATE_HOME",
    "XDG_RUNTIME_DIR",
)
"""Variables copied from the gateway's environment into every child, when set. Nothing else is."""

PASSED_ENVIRONMENT_WINDOWS: tuple[str, ...] = (
    "SYSTEMROOT",
    "SYSTEMDRIVE",
    "WINDIR",
    "COMSPEC",
    "PATHEXT",
    "USERPROFILE",
    "USERNAME",
    "HOMEDRIVE",
    "HOMEPATH",
    "APPDATA",
    "LOCALAPPDATA",
    "PROGRAMDATA",
    "TEMP",
    "TMP",
)
"""Added on Windows, where programs fail in odd ways without SYSTEMROOT and friends."""

_POLL_SECONDS = 0.02
_LINUX = sys.platform.startswith("linux")


def child_environment(parent: Mapping[str, str], extra: Mapping[str, str]) -> dict[str, str]:
    """The allow-listed variables of `parent` plus `extra` (the descriptor's `env`, which wins)."""
    names = PASSED_ENVIRONMENT + (PASSED_ENVIRONMENT_WINDOWS if sys.platform == "win32" else ())
    if sys.platform == "win32":  # variable names are case-insensitive there
        upper = {key.upper(): value for key, value in parent.items()}
        env = {name: upper[name] for name in names if name in upper}
    else:
        env = {name: parent[name] for name in names if name in parent}
    env.update(extra)
    return env


def has_path_separator(command: str) -> bool:
    return os.sep in command or (os.altsep is not None and os.altsep in command)


def find_program(command: str, *, base_dir: Path | None, search_path: str) -> tuple[str | None, str]:
    """`(absolute path or None, where it was looked for)`.

    An absolute command is used as is; a relative one with a path separator is taken relative to
    `base_dir` (the descriptor's folder), never the gateway's working directory; a bare name is
    looked up on `search_path`. Only executable files count.
    """
    if Path(command).is_absolute():
        return shutil.which(command), f"at {command}"
    if has_path_separator(command):
        if base_dir is None:
            return None, "(a relative path needs a descriptor read from a file to resolve it against)"
        candidate = os.path.abspath(base_dir / command)
        return shutil.which(candidate), f"at {candidate} (relative to the descriptor's folder)"
    return shutil.which(command, path=search_path), "on PATH"


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
