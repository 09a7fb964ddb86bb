"""What a child process is started from: the program a tool names, and the environment it gets.

Both are decided from the environment `cli/` hands down (executors never read the gateway's own):
`find_program` looks a command up the way a shell would, but only in absolute folders and, for a
relative path, in the descriptor's folder; `child_environment` keeps an allow-listed few of the
gateway's variables and adds the descriptor's `env`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

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


def child_environment(
    parent: Mapping[str, str], extra: Mapping[str, str], *, passed: Sequence[str] = ()
) -> dict[str, str]:
    """The allow-listed variables of `parent`, those named in `passed` (what one program also
    needs: which adb server, which Xcode), then `extra` (the descriptor's `env`, which wins)."""
    names = (*PASSED_ENVIRONMENT, *(PASSED_ENVIRONMENT_WINDOWS if sys.platform == "win32" else ()), *passed)
    if sys.platform == "win32":  # variable names are case-insensitive there
        upper = {key.upper(): value for key, value in parent.items()}
        env = {name: upper[name.upper()] for name in names if name.upper() in upper}
    else:
        env = {name: parent[name] for name in names if name in parent}
    env.update(extra)
    return env


def has_path_separator(command: str) -> bool:
    return os.sep in command or (os.altsep is not None and os.altsep in command)


def find_program(
    command: str,
    environ: Mapping[str, str],
    *,
    base_dir: Path | None = None,
    search_path: str | None = None,
    platform: str = sys.platform,
) -> tuple[str | None, str]:
    """`(absolute path or None, where it was looked for)`.

    An absolute command is used as is; a relative one with a path separator is taken relative to
    `base_dir` (the descriptor's folder), never the gateway's working directory; a bare name is
    looked up in the absolute folders of `search_path` (default: environ's PATH), never in the
    working directory (a relative entry such as `.` is skipped). Only executable files count; on
    Windows the extensions of environ's PATHEXT are tried too.
    """
    windows = platform in ("win32", "cygwin")
    extensions = [""]
    if windows:
        pathext = _variable(environ, "PATHEXT", windows) or ".COM;.EXE;.BAT;.CMD"
        extensions = [ext for ext in pathext.split(";") if ext] + [""]
    if os.path.isabs(command):
        return _executable(command, extensions), f"at {command}"
    if has_path_separator(command):
        if base_dir is None:
            return None, "(a relative path needs a descriptor read from a file to resolve it against)"
        candidate = os.path.abspath(base_dir / command)
        return _executable(candidate, extensions), f"at {candidate} (relative to the descriptor's folder)"
    if search_path is None:
        search_path = _variable(environ, "PATH", windows) or ("" if windows else os.defpath)
    for directory in search_path.split(";" if windows else ":"):
        if directory and os.path.isabs(directory):
            found = _executable(os.path.join(directory, command), extensions)
            if found is not None:
                return found, "on PATH"
    return None, "on PATH"


def missing_program(command: str, environ: Mapping[str, str], search_path: str | None = None) -> str | None:
    """Why `command` cannot run (`'x' was not found on PATH, or is not executable`), or None when
    it was found or is relative to a descriptor folder that only a call knows."""
    if has_path_separator(command) and not os.path.isabs(command):
        return None
    found, looked = find_program(command, environ, search_path=search_path)
    return None if found is not None else f"{command!r} was not found {looked}, or is not executable"


def _variable(environ: Mapping[str, str], name: str, windows: bool) -> str | None:
    if not windows:
        return environ.get(name)
    return next((value for key, value in environ.items() if key.upper() == name), None)


def _executable(path: str, extensions: list[str]) -> str | None:
    for extension in extensions:
        candidate = path + extension
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None
