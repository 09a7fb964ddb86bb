"""Consent on a headless machine with no OS keyring (a server, a container, an SSH session): the
round trip a user makes — `exec` → CONSENT_REQUIRED → the printed command → `exec` works — and
an "always" answer given in the MCP client that still holds after the gateway restarts, kept in
the owner-only decision file of the user state directory."""

from __future__ import annotations

import json
import os
import shlex
import stat
import sys
from pathlib import Path

import anyio
import pytest

from tests.builders import write_json
from tests.server.conftest import adapter_app
from tests.server.test_consent_e2e import GENERATIONS, User, call, client

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def apps(tmp_path: Path) -> Path:
    write_json(tmp_path / "apps" / "adapter.json", adapter_app())
    return tmp_path / "apps"


@pytest.fixture
def headless(tmp_path: Path, apps: Path) -> dict[str, str]:
    """A user's environment with no Secret Service and no desktop, `aai-gateway` on PATH."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("DBUS_", "DISPLAY", "WAYLAND_", "AAI_GATEWAY_"))
    }
    env["PYTHON_KEYRING_BACKEND"] = "keyring.backends.fail.Keyring"  # what keyring picks with none
    env["HOME"] = str(tmp_path / "home")
    env["XDG_STATE_HOME"] = str(tmp_path / "home" / ".local" / "state")
    env["AAI_GATEWAY_CONFIG"] = str(tmp_path / "home" / "config.toml")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    command = bin_dir / "aai-gateway"
    command.write_text(
        f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m aai_gateway "$@"\n', encoding="utf-8"
    )
    command.chmod(0o755)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '/usr/bin:/bin')}"
    return env


def decision_file(env: dict[str, str]) -> Path:
    return Path(env["XDG_STATE_HOME"]) / "aai-gateway" / "consent.json"


async def aai(env: dict[str, str], *argv: str) -> tuple[int, str, str]:
    done = await anyio.run_process(["aai-gateway", *argv], env=env, check=False)
    return done.returncode, done.stdout.decode(), done.stderr.decode()


async def test_exec_then_the_printed_grant_command_then_exec_works_without_a_keyring(
    headless: dict[str, str], apps: Path, tmp_path: Path
) -> None:
    exec_echo = [
        "exec",
        "dev.test.adapter",
        "echo",
        "--args",
        '{"text": "hi"}',
        "--no-default-paths",
        "--path",
        str(apps),
    ]
    code, _, err = await aai(headless, *exec_echo)
    assert code == 1
    error = json.loads(err)["error"]
    assert error["code"] == "CONSENT_REQUIRED"
    assert error["data"]["config_file"] == headless["AAI_GATEWAY_CONFIG"]
    done = await anyio.run_process(
        ["sh", "-c", error["data"]["command"]], env=headless, cwd=tmp_path, check=False
    )
    assert done.returncode == 0, done.stderr
    assert str(decision_file(headless)) in done.stdout.decode()  # it says where the grant is kept
    code, out, err = await aai(headless, *exec_echo)
    assert code == 0, err
    assert json.loads(out)["params"]["text"] == "hi"
    assert stat.S_IMODE(decision_file(headless).stat().st_mode) == 0o600
    code, listed, _ = await aai(headless, "consent", "list")
    assert code == 0 and "aai-gateway CLI" in listed
    assert f"Decisions are kept in the file {decision_file(headless)} (no usable OS keyring" in listed


async def test_the_config_lines_consent_required_prints_trust_the_tool(
    headless: dict[str, str], apps: Path
) -> None:
    exec_echo = [
        "exec",
        "dev.test.adapter",
        "echo",
        "--args",
        '{"text": "x"}',
        "--no-default-paths",
        "--path",
        str(apps),
    ]
    _, _, err = await aai(headless, *exec_echo)
    data = json.loads(err)["error"]["data"]
    config = anyio.Path(data["config_file"])
    await config.parent.mkdir(parents=True, exist_ok=True)
    await config.write_text("\n".join(data["auto_allow"]) + "\n", encoding="utf-8")
    code, _, err = await aai(headless, *exec_echo)
    assert code == 0, err
    assert not decision_file(headless).exists()  # trusted by the config, nothing stored


@GENERATIONS
async def test_an_always_answer_in_the_client_holds_after_a_restart_without_a_keyring(
    headless: dict[str, str], apps: Path, mode: str
) -> None:
    user = User("allow_tool")
    async with client(headless, apps, "agent-a", mode, user) as first:
        assert (await call(first))[0] is None
    [form] = user.shown
    assert "Always allow this tool" in json.dumps(form.requested_schema)  # offered: it can be kept
    async with client(headless, apps, "agent-a", mode) as restarted:  # cannot ask: must be remembered
        assert (await call(restarted))[0] is None
    async with client(headless, apps, "agent-b", mode) as other:
        assert (await call(other))[0] == "CONSENT_REQUIRED"
    assert "agent-a" in decision_file(headless).read_text()
