"""`aai-gateway` run as the user runs it: a child process with an environment of the test's choice."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from tests.keyring_session import PrivateKeyring


@dataclass(frozen=True)
class Ran:
    code: int
    out: str
    err: str


def run_cli(env: dict[str, str], *argv: str, stdin: str = "", cwd: Path | None = None) -> Ran:
    done = subprocess.run(
        [sys.executable, "-m", "aai_gateway", *argv],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=120,
        check=False,
    )
    return Ran(done.returncode, done.stdout, done.stderr)


def user_env(home: Path, keyring: PrivateKeyring | None) -> dict[str, str]:
    """A user whose home folder is `home` (and XDG folders in it), with the private keyring, or
    with none usable (keyring's fail backend) when `keyring` is None."""
    env = keyring.child_env() if keyring is not None else dict(keyring_free_env())
    for desktop in ("DISPLAY", "WAYLAND_DISPLAY"):
        env.pop(desktop, None)
    env.update(
        {
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_DATA_HOME": str(home / ".local" / "share"),
            "XDG_STATE_HOME": str(home / ".local" / "state"),
            "XDG_CACHE_HOME": str(home / ".cache"),
        }
    )
    env.pop("AAI_GATEWAY_PATH", None)
    return env


def keyring_free_env() -> dict[str, str]:
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith("DBUS_")}
    env["PYTHON_KEYRING_BACKEND"] = "keyring.backends.fail.Keyring"
    return env
