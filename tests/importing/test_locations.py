"""Where each client's configuration is looked for on Linux, macOS and Windows: computed from the
home folder, the platform and the environment handed in, and only files that exist listed."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from aai_gateway.importing import ConfigLocation, candidate_locations, default_locations, read_config
from aai_gateway.importing.model import CLAUDE_CODE, CLAUDE_DESKTOP, CODEX, CURSOR, GEMINI, VSCODE, WINDSURF
from tests.importing.helpers import SAMPLES

# Where each platform keeps the user-level files, relative to the home folder (Windows: the
# roaming application data folder given as APPDATA).
APP_DATA = {"linux": ".config", "darwin": "Library/Application Support", "win32": "AppData/Roaming"}
USER_FILES = [
    (CLAUDE_DESKTOP, "{app}/Claude/claude_desktop_config.json", "claude-desktop/claude_desktop_config.json"),
    (CLAUDE_CODE, ".claude.json", "claude-code/.claude.json"),
    (CURSOR, ".cursor/mcp.json", "cursor/mcp.json"),
    (VSCODE, "{app}/Code/User/mcp.json", "vscode/mcp.json"),
    (VSCODE, "{app}/Code/User/settings.json", "vscode/settings.json"),
    (CODEX, ".codex/config.toml", "codex/config.toml"),
    (GEMINI, ".gemini/settings.json", "gemini/settings.json"),
    (WINDSURF, ".codeium/windsurf/mcp_config.json", "windsurf/mcp_config.json"),
]
PROJECT_FILES = [
    (CLAUDE_CODE, ".mcp.json", "claude-code/.mcp.json"),
    (CURSOR, ".cursor/mcp.json", "cursor/project/.cursor/mcp.json"),
    (VSCODE, ".vscode/mcp.json", "vscode/mcp.json"),
    (CODEX, ".codex/config.toml", "codex/config.toml"),
    (GEMINI, ".gemini/settings.json", "gemini/settings.json"),
]


def place(root: Path, relative: str, sample: str) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(SAMPLES / sample, path)
    return path


@pytest.mark.parametrize("platform", ["linux", "darwin", "win32"])
def test_every_clients_user_and_project_files_are_found_on_each_platform(
    tmp_path: Path, platform: str
) -> None:
    home, project = tmp_path / "home", tmp_path / "work" / "shop"
    environ = {"APPDATA": str(home / "AppData" / "Roaming")} if platform == "win32" else {}
    expected = [
        ConfigLocation(client, place(home, relative.format(app=APP_DATA[platform]), sample))
        for client, relative, sample in USER_FILES
    ]
    expected += [
        ConfigLocation(client, place(project, relative, sample)) for client, relative, sample in PROJECT_FILES
    ]
    place(home, "Documents/mcp.json", "cursor/mcp.json")  # not a place any client reads

    found = default_locations(home, platform, environ, project)

    assert found == expected
    for location in found:
        report = read_config(location.path, location.client)
        assert report.servers, location
        assert {server.client for server in report.servers} == {location.client}


def test_only_existing_files_are_listed(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert default_locations(home, "linux", {}, tmp_path) == []
    (home / ".cursor").mkdir(parents=True)
    (home / ".cursor" / "mcp.json").mkdir()  # a folder where the file would be
    assert default_locations(home, "linux", {}) == []
    assert (
        len(candidate_locations(home, "linux", {}, tmp_path / "p"))
        == len(USER_FILES) + 2 + len(PROJECT_FILES) + 1
    )


def test_the_environment_handed_in_moves_the_folders_it_names(tmp_path: Path) -> None:
    home = tmp_path / "home"
    environ = {
        "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
        "CODEX_HOME": str(tmp_path / "codex"),
        "APPDATA": str(tmp_path / "roaming"),
    }
    linux = candidate_locations(home, "linux", environ)
    assert ConfigLocation(CLAUDE_DESKTOP, tmp_path / "xdg" / "Claude" / "claude_desktop_config.json") in linux
    assert ConfigLocation(VSCODE, tmp_path / "xdg" / "Code - Insiders" / "User" / "mcp.json") in linux
    assert ConfigLocation(CODEX, tmp_path / "codex" / "config.toml") in linux
    windows = candidate_locations(home, "win32", environ)
    assert (
        ConfigLocation(CLAUDE_DESKTOP, tmp_path / "roaming" / "Claude" / "claude_desktop_config.json")
        in windows
    )
    # macOS keeps application data under the home folder whatever the environment says
    darwin = candidate_locations(home, "darwin", environ)
    support = home / "Library" / "Application Support"
    assert ConfigLocation(CLAUDE_DESKTOP, support / "Claude" / "claude_desktop_config.json") in darwin


def test_relative_or_empty_folder_variables_are_ignored(tmp_path: Path) -> None:
    home = tmp_path / "home"
    relative = {"XDG_CONFIG_HOME": "relative/config", "CODEX_HOME": "", "APPDATA": "roaming"}
    assert candidate_locations(home, "linux", relative) == candidate_locations(home, "linux", {})
    assert candidate_locations(home, "win32", relative) == candidate_locations(home, "win32", {})
    windows_style = candidate_locations(home, "win32", {"APPDATA": "C:\\Users\\ada\\AppData\\Roaming"})
    assert (
        windows_style[0].path
        == Path("C:\\Users\\ada\\AppData\\Roaming") / "Claude" / "claude_desktop_config.json"
    )


def test_a_project_in_the_home_folder_lists_no_file_twice(tmp_path: Path) -> None:
    place(tmp_path, ".cursor/mcp.json", "cursor/mcp.json")
    assert default_locations(tmp_path, "linux", {}, tmp_path) == [
        ConfigLocation(CURSOR, tmp_path / ".cursor" / "mcp.json")
    ]
