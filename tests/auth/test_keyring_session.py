"""The PrivateKeyring test helper itself: isolation from the real HOME, clean start-up and tear-down."""

from __future__ import annotations

import os
import shutil
import signal
import stat
import time
from pathlib import Path

import pytest

from aai_gateway.auth import KeyringSecretStore
from tests.keyring_session import (
    SECRET_SERVICE_BACKEND,
    KeyringPeersMissingError,
    PrivateKeyring,
    PrivateKeyringError,
)


def running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def private_buses() -> set[int]:
    """dbus-daemons running with a PrivateKeyring configuration (the session's own one included)."""
    found = set()
    for entry in Path("/proc").iterdir():
        try:
            command = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if entry.name.isdigit() and b"dbus-daemon" in command and b"/aai-keyring-" in command:
            found.add(int(entry.name))
    return found


def test_the_private_keyring_environment_points_into_its_own_temporary_directory(
    private_keyring: PrivateKeyring,
) -> None:
    root = private_keyring.root
    assert root is not None
    env = private_keyring.env
    for name in ("HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR"):
        assert Path(env[name]).parent == root, name
    assert env["HOME"] != os.environ.get("HOME")
    assert env["DBUS_SESSION_BUS_ADDRESS"].startswith(f"unix:path={env['XDG_RUNTIME_DIR']}/")
    assert env["PYTHON_KEYRING_BACKEND"] == SECRET_SERVICE_BACKEND
    assert stat.S_IMODE(Path(env["XDG_RUNTIME_DIR"]).stat().st_mode) == 0o700
    merged = private_keyring.child_env({"PATH": "/usr/bin", "HOME": "/root"})
    assert merged["PATH"] == "/usr/bin"
    assert merged["HOME"] == env["HOME"]


def test_stopping_the_private_keyring_leaves_no_process_and_no_directory() -> None:
    private = PrivateKeyring().start()
    root = private.root
    assert root is not None
    pids = private.pids()
    assert {private.bus_pid, private.daemon_pid} <= set(pids)
    KeyringSecretStore(service="aai-test-teardown", backend=private.backend()).set("key", "value")

    private.stop()
    private.stop()  # idempotent

    assert [pid for pid in pids if running(pid)] == []
    assert not root.exists()
    assert not private.running
    with pytest.raises(PrivateKeyringError, match="not running"):
        private.backend()


def test_the_context_manager_stops_the_keyring_when_the_block_raises() -> None:
    pids: list[int] = []
    with pytest.raises(RuntimeError, match="boom"), PrivateKeyring() as private:
        pids = private.pids()
        raise RuntimeError("boom")
    assert pids
    assert [pid for pid in pids if running(pid)] == []


def test_a_keyring_daemon_killed_from_outside_is_reported_by_name_and_signal() -> None:
    with PrivateKeyring() as private:
        daemon = private.daemon_pid
        assert daemon is not None
        os.kill(daemon, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while private.running and time.monotonic() < deadline:
            time.sleep(0.02)
        with pytest.raises(
            PrivateKeyringError, match=rf"gnome-keyring-daemon \(pid {daemon}\) was killed by signal 9"
        ):
            private.backend()


def test_missing_daemons_are_reported_with_the_script_that_installs_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(KeyringPeersMissingError, match=r"run scripts/install-test-peers") as caught:
        PrivateKeyring().start()
    assert "dbus-daemon and gnome-keyring-daemon not installed" in str(caught.value)


def test_a_keyring_daemon_that_dies_at_start_is_reported_and_the_bus_is_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dbus_daemon = shutil.which("dbus-daemon")
    assert dbus_daemon is not None
    fake = tmp_path / "gnome-keyring-daemon"
    fake.write_text("#!/bin/sh\necho 'cannot start: broken for the test' >&2\nexit 3\n")
    fake.chmod(0o755)
    (tmp_path / "dbus-daemon").symlink_to(dbus_daemon)
    monkeypatch.setenv("PATH", str(tmp_path))
    buses_before = private_buses()

    private = PrivateKeyring(start_seconds=5)
    with pytest.raises(PrivateKeyringError, match="broken for the test") as caught:
        private.start()
    assert "daemon exit code 3" in str(caught.value)
    assert private.root is None
    assert not private.running
    assert private_buses() <= buses_before
