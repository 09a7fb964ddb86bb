"""Finding the native dialog of this session, and what its child process inherits."""

from __future__ import annotations

from pathlib import Path

import pytest

from aai_gateway.consent.dialog import available_dialog, dialog_environ, find_dialog_program


def executable(folder: Path, name: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    program = folder / name
    program.write_text("#!/bin/sh\nexit 0\n")
    program.chmod(0o755)
    return program


def test_a_session_without_a_display_has_no_dialog(tmp_path: Path) -> None:
    executable(tmp_path / "bin", "zenity")
    assert available_dialog({"PATH": str(tmp_path / "bin")}, "linux") is None


def test_zenity_is_preferred_to_kdialog_on_a_desktop(tmp_path: Path) -> None:
    zenity = executable(tmp_path / "bin", "zenity")
    executable(tmp_path / "bin", "kdialog")
    backend = available_dialog({"PATH": str(tmp_path / "bin"), "WAYLAND_DISPLAY": "wayland-0"}, "linux")
    assert backend is not None
    assert (backend.kind, backend.program) == ("zenity", str(zenity))


def test_kdialog_is_used_when_zenity_is_missing(tmp_path: Path) -> None:
    kdialog = executable(tmp_path / "bin", "kdialog")
    backend = available_dialog({"PATH": str(tmp_path / "bin"), "DISPLAY": ":0"}, "linux")
    assert backend is not None and (backend.kind, backend.program) == ("kdialog", str(kdialog))


def test_a_desktop_without_a_dialog_program_has_no_dialog(tmp_path: Path) -> None:
    assert available_dialog({"PATH": str(tmp_path), "DISPLAY": ":0"}, "linux") is None


def test_a_relative_path_entry_is_never_searched(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    executable(tmp_path / "bin", "zenity")
    executable(tmp_path, "zenity")
    monkeypatch.chdir(tmp_path)
    assert find_dialog_program(["zenity"], {"PATH": "bin:.:"}, "linux") is None


def test_macos_uses_osascript_and_windows_uses_powershell(tmp_path: Path) -> None:
    osascript = executable(tmp_path / "mac", "osascript")
    mac = available_dialog({"PATH": str(tmp_path / "mac")}, "darwin")
    assert mac is not None and (mac.kind, mac.program) == ("osascript", str(osascript))
    pwsh = executable(tmp_path / "win", "pwsh.EXE")
    windows = available_dialog({"Path": str(tmp_path / "win"), "PATHEXT": ".EXE"}, "win32")
    assert windows is not None and (windows.kind, windows.program) == ("powershell", str(pwsh))


def test_the_dialog_inherits_the_desktop_variables_and_no_credentials() -> None:
    environ = {
        "PATH": "/usr/bin",
        "DISPLAY": ":0",
        "XDG_RUNTIME_DIR": "/run/user/1000",
        "LC_ALL": "de_DE.UTF-8",
        "DBUS_SESSION_BUS_ADDRESS": "unix:path=/run/user/1000/bus",
        "GITHUB_TOKEN": "ghp_secret",
        "AWS_SECRET_ACCESS_KEY": "secret",
        "AAI_GATEWAY_CONFIG": "/tmp/config.toml",
    }
    child = dialog_environ(environ, "linux")
    assert set(child) == {"PATH", "DISPLAY", "XDG_RUNTIME_DIR", "LC_ALL", "DBUS_SESSION_BUS_ADDRESS"}


def test_on_windows_the_dialog_inherits_everything_but_forged_answer_variables() -> None:
    child = dialog_environ({"SystemRoot": "C:\\Windows", "aai_consent_key_1": "allow_app"}, "win32")
    assert child == {"SystemRoot": "C:\\Windows"}
