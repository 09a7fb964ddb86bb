"""`aai-gateway exec` in a real terminal (a pty): the consent question shows hostile names as
escapes, never as terminal control or fake lines, and the typed answer is kept in the keyring."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

from tests.builders import write_json
from tests.keyring_session import PrivateKeyring
from tests.server.conftest import adapter_app

HOSTILE_APP = "Notes\x1b[2J\x1b[31mTool: fake\nApp: Trusted `id` $(touch {marker})"


def exec_argv(apps: Path) -> list[str]:
    call = ["exec", "dev.test.adapter", "echo", "--args", '{"text": "hi"}']
    return [sys.executable, "-m", "aai_gateway", *call, "--no-default-paths", "--path", str(apps)]


def exec_in_terminal(
    env: dict[str, str], apps: Path, answer: bytes, *, piped_stdout: list[bytes] | None = None
) -> tuple[int, str]:
    """Run `aai-gateway exec` with a pty as stdin, stdout and stderr (stdout a pipe instead when
    `piped_stdout` is given: it gets what was written there); type `answer` once asked."""
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        exec_argv(apps),
        stdin=follower,
        stdout=follower if piped_stdout is None else subprocess.PIPE,
        stderr=follower,
        env=env,
        start_new_session=True,
    )
    os.close(follower)
    shown = b""
    deadline = time.monotonic() + 60
    answered = False
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([leader], [], [], 0.2)
            if ready:
                try:
                    chunk = os.read(leader, 65536)
                except OSError:  # EIO: the child closed the terminal
                    break
                if not chunk:
                    break
                shown += chunk
            if not answered and b"Choose 1-" in shown:
                os.write(leader, answer)
                answered = True
            if process.poll() is not None and not ready:
                break
        if piped_stdout is not None:
            assert process.stdout is not None
            piped_stdout.append(process.stdout.read())
        return process.wait(timeout=30), shown.decode("utf-8", "replace")
    finally:
        if process.poll() is None:
            process.kill()
        os.close(leader)


def test_the_terminal_prompt_shows_escapes_and_remembers_always_allow(
    keyring: PrivateKeyring, tmp_path: Path
) -> None:
    marker = tmp_path / "PWNED"
    apps = tmp_path / "apps"
    document = adapter_app()
    document["app"]["name"] = {"en": HOSTILE_APP.format(marker=marker)}
    write_json(apps / "adapter.json", document)
    env = keyring.child_env()
    env["AAI_GATEWAY_CONFIG"] = str(tmp_path / "no-config.toml")
    env.pop("DISPLAY", None)
    env.pop("WAYLAND_DISPLAY", None)

    code, shown = exec_in_terminal(env, apps, b"2\n")  # 2: Always allow this tool

    assert code == 0, shown
    assert "\x1b" not in shown.split("Choose 1-")[0]  # no escape sequence reached the terminal
    assert "App: NotesTool: fake App: Trusted `id`" in shown  # its escape sequences gone, on one line
    assert "\nTool: fake" not in shown.replace("\r\n", "\n")
    assert "  2. Always allow this tool" in shown
    assert '"count": 1' in shown and '"text": "hi"' in shown  # the arguments of this call, then its result
    assert not marker.exists()

    again = subprocess.run(  # no terminal now: only the remembered grant lets it run
        exec_argv(apps),
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["params"] == {"text": "hi", "count": 1}


def test_an_answer_that_is_not_a_choice_is_a_denial(keyring: PrivateKeyring, tmp_path: Path) -> None:
    apps = tmp_path / "apps"
    write_json(apps / "adapter.json", adapter_app())
    env = keyring.child_env()
    env["AAI_GATEWAY_CONFIG"] = str(tmp_path / "no-config.toml")
    code, shown = exec_in_terminal(env, apps, b"yes please\n")
    assert code == 1
    assert "CONSENT_DENIED" in shown


def test_the_prompt_goes_to_the_terminal_and_only_the_result_to_a_piped_stdout(
    keyring: PrivateKeyring, tmp_path: Path
) -> None:
    apps = tmp_path / "apps"
    write_json(apps / "adapter.json", adapter_app())
    env = keyring.child_env()
    env["AAI_GATEWAY_CONFIG"] = str(tmp_path / "no-config.toml")
    stdout: list[bytes] = []
    code, shown = exec_in_terminal(env, apps, b"1\n", piped_stdout=stdout)  # `exec … | jq`
    assert code == 0, shown
    assert "Choose 1-5: " in shown and "  1. Allow once" in shown
    assert json.loads(stdout[0])["params"] == {"text": "hi", "count": 1}  # nothing but the result
