"""Where each client keeps its MCP configuration, on each OS.

Computed from what the caller passes (the home folder, `sys.platform`'s value, the environment
and the project folder), never from the process itself, so a test can point it anywhere.
User-level files come first, then the project's, in the order of `CLIENTS`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from .model import CLAUDE_CODE, CLAUDE_DESKTOP, CODEX, CURSOR, GEMINI, VSCODE, WINDSURF


class ConfigLocation(NamedTuple):
    client: str
    path: Path


def default_locations(
    home: Path, platform: str, environ: Mapping[str, str], project_dir: Path | None = None
) -> list[ConfigLocation]:
    """The configuration files of every client that exist here. `platform` is a `sys.platform`
    value (`linux`, `darwin`, `win32`; other Unix systems are treated like Linux); `environ`
    supplies `APPDATA` (Windows), `XDG_CONFIG_HOME` (Linux) and `CODEX_HOME`."""
    return [
        location
        for location in candidate_locations(home, platform, environ, project_dir)
        if location.path.is_file()
    ]


def candidate_locations(
    home: Path, platform: str, environ: Mapping[str, str], project_dir: Path | None = None
) -> list[ConfigLocation]:
    """Every place `default_locations` looks, whether a file is there or not."""
    app_data = _app_data(home, platform, environ)
    codex_home = _absolute(environ.get("CODEX_HOME")) or home / ".codex"
    user = [
        ConfigLocation(CLAUDE_DESKTOP, app_data / "Claude" / "claude_desktop_config.json"),
        ConfigLocation(CLAUDE_CODE, home / ".claude.json"),
        ConfigLocation(CURSOR, home / ".cursor" / "mcp.json"),
        *(
            ConfigLocation(VSCODE, app_data / edition / "User" / name)
            for edition in ("Code", "Code - Insiders")
            for name in ("mcp.json", "settings.json")
        ),
        ConfigLocation(CODEX, codex_home / "config.toml"),
        ConfigLocation(GEMINI, home / ".gemini" / "settings.json"),
        ConfigLocation(WINDSURF, home / ".codeium" / "windsurf" / "mcp_config.json"),
    ]
    if project_dir is None:
        return user
    project = [
        ConfigLocation(CLAUDE_CODE, project_dir / ".mcp.json"),
        ConfigLocation(CURSOR, project_dir / ".cursor" / "mcp.json"),
        ConfigLocation(VSCODE, project_dir / ".vscode" / "mcp.json"),
        ConfigLocation(VSCODE, project_dir / ".vscode" / "settings.json"),
        ConfigLocation(CODEX, project_dir / ".codex" / "config.toml"),
        ConfigLocation(GEMINI, project_dir / ".gemini" / "settings.json"),
    ]
    seen = {location.path for location in user}  # a project in the home folder: no file twice
    return user + [location for location in project if location.path not in seen]


def _app_data(home: Path, platform: str, environ: Mapping[str, str]) -> Path:
    """Where desktop applications keep per-user settings: Electron's `appData` folder, which
    Claude Desktop and VS Code use."""
    if platform == "darwin":
        return home / "Library" / "Application Support"
    if platform == "win32":
        return _absolute(environ.get("APPDATA")) or home / "AppData" / "Roaming"
    # The XDG base directory specification: a relative value is ignored.
    return _absolute(environ.get("XDG_CONFIG_HOME")) or home / ".config"


def _absolute(value: str | None) -> Path | None:
    if not value:
        return None
    path = Path(value)
    # A Windows path (`C:\\Users\\…\\AppData\\Roaming`) is absolute where it is used; on another
    # system (in tests) `Path` cannot tell, so a drive letter counts as absolute too.
    return path if path.is_absolute() or (len(value) > 2 and value[1] == ":") else None
